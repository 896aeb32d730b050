// llmc-style: the layer-norm forward as llm.c trains GPT-2 on a GPU (the idea
// of its layernorm_forward kernel, llmc/layernorm.cuh), written here from the
// algorithm, independent of llmk and not copied from llm.c: a warp per row,
// 16 rows a block of 512 threads; each lane sums its strided elements, the
// warp's sums by shuffles: the mean, then the squared deviations (two
// passes), rstd = rsqrtf(var + 1e-5); the row written with streaming stores,
// mean and rstd by lane 0. out overwritten (llm.c's).
#include "../harness/llmc_cuda.hpp"
#include "peers.hpp"

#include <Kokkos_Core.hpp>

#include <stdexcept>
#include <string>

namespace llmk::perf::layernorm_forward {
namespace {

constexpr int kWarp = 32, kRowsPerBlock = 16;

using llmc::narrow;
using llmc::widen;

__device__ inline float warp_sum(float v) {
  for (int o = kWarp / 2; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

template <class T>
__global__ void __launch_bounds__(kWarp* kRowsPerBlock)
    layernorm_forward_warps(T* out, float* mean, float* rstd, const T* inp, const T* weight,
                            const T* bias, index_t M, index_t C) {
  const index_t m = index_t(blockIdx.x) * kRowsPerBlock + threadIdx.y;
  if (m >= M) return;
  const T* x = inp + m * C;
  float s = 0;
  for (index_t c = threadIdx.x; c < C; c += kWarp) s += widen(x[c]);
  const float mu = warp_sum(s) / float(C);
  float v = 0;
  for (index_t c = threadIdx.x; c < C; c += kWarp) {
    const float d = widen(x[c]) - mu;
    v += d * d;
  }
  const float r = rsqrtf(warp_sum(v) / float(C) + 1e-5f);
  for (index_t c = threadIdx.x; c < C; c += kWarp) {
    const float y =
        (widen(__ldcs(x + c)) - mu) * r * widen(weight[c]) + (bias ? widen(bias[c]) : 0.0f);
    __stcs(out + m * C + c, narrow<T>(y));
  }
  if (threadIdx.x == 0) {
    mean[m] = mu;
    rstd[m] = r;
  }
}

template <class T>
void run_typed(const PeerArgs& a) {
  if (a.M == 0 || a.C == 0) return;
  const dim3 block(kWarp, kRowsPerBlock);
  const unsigned blocks = unsigned((a.M + kRowsPerBlock - 1) / kRowsPerBlock);
  layernorm_forward_warps<T><<<blocks, block, 0, Kokkos::Cuda().cuda_stream()>>>(
      static_cast<T*>(a.out), a.mean, a.rstd, static_cast<const T*>(a.inp),
      static_cast<const T*>(a.weight), static_cast<const T*>(a.bias), a.M, a.C);
  llmc::check(cudaGetLastError(), "layernorm_forward llmc-style", "kernel launch");
}

void llmc_style(const PeerArgs& a) {
  llmc::with_element_type(a.precision, "layernorm_forward llmc-style",
                          [&](auto t) { run_typed<decltype(t)>(a); });
}

}  // namespace

std::vector<Peer> llmc_peers() {
  return llmc::llmc_style_peer<PeerArgs>(
      llmc_style,
      "llm.c's algorithm (layernorm_forward's idea, written independently): a warp per row, "
      "two passes of warp sums (mean, then squared deviations), streaming stores; out overwritten");
}

}  // namespace llmk::perf::layernorm_forward
