// Cuda peers: the seed program's own configuration and the GEMM ceiling.
//   cublas-seed: cuBLAS sgemm for dinp and dweight (beta = 1) and the seed's
//                shared-memory bias kernel (a block of 512 threads per output
//                channel, coarsened double sums, a tree in shared memory);
//   cublas-sgemm: the two cuBLAS sgemm calls alone (no dbias), the ceiling that
//                the "vs" column on Cuda compares with.
// Written here in llmk's style from the seed's description, not copied. The
// one change: the bias kernel adds to dbias (+=) where the seed's overwrote it,
// so that it can be validated like llmk's accumulating implementations.
#include "peers.hpp"

#include <Kokkos_Core.hpp>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace llmk::perf::matmul_backward {
namespace {

constexpr int seed_bias_block = 512;

__global__ void seed_bias_kernel(float* dbias, const float* dout, index_t M, index_t OC) {
  extern __shared__ float partial[];
  const index_t o = blockIdx.x;
  double sum = 0.0;
  for (index_t m = threadIdx.x; m < M; m += blockDim.x) sum += dout[m * OC + o];
  partial[threadIdx.x] = float(sum);
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) dbias[o] += partial[0];
}

void check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("llmk-perf: ") + what + " failed: " +
                             cublasGetStatusString(status));
}

// The perf driver's own handle, on Kokkos' default Cuda stream (where
// llmk-perf enqueues and times), strict fp32 as in the seed (TF32 off);
// destroyed at Kokkos::finalize. (llmk-perf calls peers from one thread.)
cublasHandle_t handle() {
  static cublasHandle_t h = nullptr;
  if (!h) {
    cublasHandle_t created = nullptr;
    check(cublasCreate(&created), "cublasCreate");
    h = created;
    Kokkos::push_finalize_hook([] {
      cublasDestroy(h);
      h = nullptr;
    });
    check(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
  }
  check(cublasSetStream(h, Kokkos::Cuda().cuda_stream()), "cublasSetStream");
  return h;
}

// Row-major buffers seen as column-major transposes (see backends/cublas).
// Zero sizes: nothing to multiply (cuBLAS would refuse their leading dimensions).
void cublas_gemms(const PeerArgs& a) {
  if (a.M == 0 || a.C == 0 || a.OC == 0) return;
  const float one = 1.0f;
  check(cublasSgemm_64(handle(), CUBLAS_OP_N, CUBLAS_OP_N, a.C, a.M, a.OC, &one, a.weight, a.C,
                       a.dout, a.OC, &one, a.dinp, a.C),
        "cublasSgemm (dinp)");
  check(cublasSgemm_64(handle(), CUBLAS_OP_N, CUBLAS_OP_T, a.C, a.OC, a.M, &one, a.inp, a.C,
                       a.dout, a.OC, &one, a.dweight, a.C),
        "cublasSgemm (dweight)");
}

void seed_bias(const PeerArgs& a) {
  if (a.OC == 0) return;
  seed_bias_kernel<<<unsigned(a.OC), seed_bias_block, seed_bias_block * sizeof(float),
                     Kokkos::Cuda().cuda_stream()>>>(a.dbias, a.dout, a.M, a.OC);
  if (cudaGetLastError() != cudaSuccess) throw std::runtime_error("llmk-perf: seed bias kernel launch failed");
}

void cublas_seed(const PeerArgs& a) {
  cublas_gemms(a);
  seed_bias(a);
}

}  // namespace

std::vector<Peer> cuda_peers() {
  const std::vector<std::string> cuda{"Cuda"};
  std::vector<Peer> peers(2);
  peers[0].name = "cublas-seed";
  peers[0].backends = cuda;
  peers[0].run = cublas_seed;
  peers[0].bias_only = seed_bias;
  peers[0].bias_kernel = "the seed's shared-memory kernel (512 threads/channel)";
  peers[0].description = "the seed's configuration: 2 × cuBLAS sgemm + its bias kernel";
  peers[1].name = "cublas-sgemm";
  peers[1].backends = cuda;
  peers[1].run = cublas_gemms;
  peers[1].computes_bias = false;
  peers[1].description = "the two cuBLAS sgemm calls alone, dbias not computed (not checked)";
  return peers;
}

}  // namespace llmk::perf::matmul_backward
