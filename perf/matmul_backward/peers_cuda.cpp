// Cuda peers in float32: the seed program's own configuration and the GEMM
// ceilings (llmc-style, in every precision, is in peers_llmc_cuda.cpp).
//   cublas-seed: cuBLAS sgemm for dinp and dweight (beta = 1) and the seed's
//                shared-memory bias kernel (a block of 512 threads per output
//                channel, coarsened double sums, a tree in shared memory);
//   cublas-sgemm: the two cuBLAS sgemm calls alone (no dbias), the ceiling that
//                the "vs" column on Cuda compares fp32 rows with;
//   cublas-tf32: the same two calls with TF32 tensor cores allowed
//                (CUBLAS_TF32_TENSOR_OP_MATH), the ceiling for tf32 rows.
// Written here in llmk's style from the seed's description, not copied. The
// one change: the bias kernel adds to dbias (+=) where the seed's overwrote it,
// so that it can be validated like llmk's accumulating implementations.
// With overwrite_dinp the dinp sgemm has beta = 0. None runs a GELU backward.
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

// The perf driver's own handles, on Kokkos' default Cuda stream (where
// llmk-perf enqueues and times): strict fp32 as in the seed (TF32 off), or
// TF32 allowed; destroyed at Kokkos::finalize. (llmk-perf calls peers from
// one thread.)
cublasHandle_t handle(bool tf32 = false) {
  static cublasHandle_t handles[2] = {nullptr, nullptr};
  cublasHandle_t& h = handles[tf32 ? 1 : 0];
  if (!h) {
    cublasHandle_t created = nullptr;
    check(cublasCreate(&created), "cublasCreate");
    h = created;
    Kokkos::push_finalize_hook([&h] {
      cublasDestroy(h);
      h = nullptr;
    });
    check(cublasSetMathMode(h, tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH),
          "cublasSetMathMode");
  }
  check(cublasSetStream(h, Kokkos::Cuda().cuda_stream()), "cublasSetStream");
  return h;
}

// Row-major buffers seen as column-major transposes (see backends/cublas).
// Zero sizes: nothing to multiply (cuBLAS would refuse their leading dimensions).
// OC = 0 with overwrite_dinp: dinp is an empty sum, zeros.
void cublas_gemms(const PeerArgs& a) {
  float* const dinp = static_cast<float*>(a.dinp);
  const float* const dout = static_cast<const float*>(a.dout);
  if (a.OC == 0 && a.overwrite_dinp && a.M > 0 && a.C > 0) {
    if (cudaMemsetAsync(dinp, 0, std::size_t(a.M * a.C) * sizeof(float),
                        Kokkos::Cuda().cuda_stream()) != cudaSuccess)
      throw std::runtime_error("llmk-perf: cudaMemsetAsync failed");
  }
  if (a.M == 0 || a.C == 0 || a.OC == 0) return;
  const cublasHandle_t h = handle(a.precision == "tf32");
  const float one = 1.0f, dinp_beta = a.overwrite_dinp ? 0.0f : 1.0f;
  check(cublasSgemm_64(h, CUBLAS_OP_N, CUBLAS_OP_N, a.C, a.M, a.OC, &one,
                       static_cast<const float*>(a.weight), a.C, dout, a.OC, &dinp_beta, dinp, a.C),
        "cublasSgemm (dinp)");
  check(cublasSgemm_64(h, CUBLAS_OP_N, CUBLAS_OP_T, a.C, a.OC, a.M, &one,
                       static_cast<const float*>(a.inp), a.C, dout, a.OC, &one,
                       static_cast<float*>(a.dweight), a.C),
        "cublasSgemm (dweight)");
}

void seed_bias(const PeerArgs& a) {
  if (a.OC == 0) return;
  seed_bias_kernel<<<unsigned(a.OC), seed_bias_block, seed_bias_block * sizeof(float),
                     Kokkos::Cuda().cuda_stream()>>>(static_cast<float*>(a.dbias),
                                                     static_cast<const float*>(a.dout), a.M, a.OC);
  if (cudaGetLastError() != cudaSuccess) throw std::runtime_error("llmk-perf: seed bias kernel launch failed");
}

void cublas_seed(const PeerArgs& a) {
  cublas_gemms(a);
  seed_bias(a);
}

}  // namespace

#ifdef LLMK_PERF_LLMC_PEER
std::vector<Peer> llmc_peers();  // peers_llmc_cuda.cpp
#endif

std::vector<Peer> cuda_peers() {
  const std::vector<std::string> cuda{"Cuda"};
  std::vector<Peer> peers(3);
  peers[0].name = "cublas-seed";
  peers[0].backends = cuda;
  peers[0].precisions = {"fp32"};
  peers[0].run = cublas_seed;
  peers[0].bias_only = seed_bias;
  peers[0].bias_kernel = "the seed's shared-memory kernel (512 threads/channel)";
  peers[0].description = "the seed's configuration: 2 × cuBLAS sgemm + its bias kernel";
  peers[1].name = "cublas-sgemm";
  peers[1].backends = cuda;
  peers[1].precisions = {"fp32"};
  peers[1].run = cublas_gemms;
  peers[1].computes_bias = false;
  peers[1].comparison = true;
  peers[1].description = "the two cuBLAS sgemm calls alone, dbias not computed (not checked)";
  peers[2].name = "cublas-tf32";
  peers[2].backends = cuda;
  peers[2].precisions = {"tf32"};
  peers[2].run = cublas_gemms;
  peers[2].computes_bias = false;
  peers[2].comparison = true;
  peers[2].description =
      "the two cuBLAS sgemm calls with CUBLAS_TF32_TENSOR_OP_MATH alone, dbias not computed "
      "(not checked)";
#ifdef LLMK_PERF_LLMC_PEER
  for (Peer& p : llmc_peers()) peers.push_back(std::move(p));
#endif
  return peers;
}

}  // namespace llmk::perf::matmul_backward
