// llmc-style: the GELU backward as llm.c trains GPT-2 on a GPU (the idea of
// its gelu_backward_inplace kernel, llmc/gelu.cuh), written here from the
// algorithm — independent of llmk and not copied from llm.c: a thread per
// 16-byte vector of each array (4 float, 8 bf16), blocks of 512 threads,
// dout and inp read with streaming loads (__ldcs: used once), gelu' in float
// with tanhf, dinp written (+= its old value unless overwritten; llm.c's
// kernel writes in place over dout, which llmk does not allow, so here dinp
// is its own array). N need not be a multiple of the vector (a scalar tail),
// but the arrays must be 16-byte aligned (they are: the harness's views).
#include "../harness/llmc_cuda.hpp"
#include "peers.hpp"

#include <Kokkos_Core.hpp>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace llmk::perf::gelu_backward {
namespace {

constexpr int kThreads = 512;

using llmc::narrow;
using llmc::widen;

__device__ inline float gelu_derivative(float x) {
  const float s = 0.7978845608f, k = 0.044715f;
  const float t = tanhf(s * (x + k * x * x * x));
  const float sech2 = 1.0f - t * t;
  return 0.5f * (1.0f + t) + 0.5f * x * sech2 * s * (1.0f + 3.0f * k * x * x);
}

template <class T, bool Overwrite>
__global__ void __launch_bounds__(kThreads)
    gelu_backward_vec(T* dinp, const T* dout, const T* inp, index_t N) {
  constexpr int V = 16 / int(sizeof(T));
  const index_t i = (index_t(blockIdx.x) * kThreads + threadIdx.x) * V;
  if (i + V <= N) {
    llmc::Vec16<T> d, x, out;
    d.raw = __ldcs(reinterpret_cast<const int4*>(dout + i));
    x.raw = __ldcs(reinterpret_cast<const int4*>(inp + i));
    if (!Overwrite) out.raw = *reinterpret_cast<const int4*>(dinp + i);
#pragma unroll
    for (int u = 0; u < V; ++u) {
      const float g = gelu_derivative(widen(x.e[u])) * widen(d.e[u]);
      out.e[u] = narrow<T>(Overwrite ? g : widen(out.e[u]) + g);
    }
    *reinterpret_cast<int4*>(dinp + i) = out.raw;
  } else {
    for (index_t j = i; j < N; ++j) {
      const float g = gelu_derivative(widen(inp[j])) * widen(dout[j]);
      dinp[j] = narrow<T>(Overwrite ? g : widen(dinp[j]) + g);
    }
  }
}

template <class T>
void run_typed(const PeerArgs& a) {
  if (a.N == 0) return;
  constexpr int V = 16 / int(sizeof(T));
  const index_t threads = (a.N + V - 1) / V;
  const unsigned blocks = unsigned((threads + kThreads - 1) / kThreads);
  const cudaStream_t stream = Kokkos::Cuda().cuda_stream();
  T* dinp = static_cast<T*>(a.dinp);
  const T* dout = static_cast<const T*>(a.dout);
  const T* inp = static_cast<const T*>(a.inp);
  if (a.overwrite_dinp)
    gelu_backward_vec<T, true><<<blocks, kThreads, 0, stream>>>(dinp, dout, inp, a.N);
  else
    gelu_backward_vec<T, false><<<blocks, kThreads, 0, stream>>>(dinp, dout, inp, a.N);
  llmc::check(cudaGetLastError(), "gelu llmc-style", "kernel launch");
}

void llmc_style(const PeerArgs& a) {
  llmc::with_element_type(a.precision, "gelu llmc-style",
                          [&](auto t) { run_typed<decltype(t)>(a); });
}

}  // namespace

std::vector<Peer> llmc_peers() {
  return llmc::llmc_style_peer<PeerArgs>(
      llmc_style,
      "llm.c's algorithm (gelu_backward_inplace's idea, written independently): a thread per "
      "16-byte vector, 512-thread blocks, streaming loads of dout and inp, dinp its own array");
}

}  // namespace llmk::perf::gelu_backward
