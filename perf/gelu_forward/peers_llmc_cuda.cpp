// llmc-style: the GELU forward as llm.c trains GPT-2 on a GPU (the idea of
// its gelu_forward kernel, llmc/gelu.cuh), written here from the algorithm,
// independent of llmk and not copied from llm.c: a thread per 16-byte vector
// (4 float, 8 bf16), blocks of 512 threads, inp read with streaming loads
// (__ldcs: used once), gelu in float with tanhf, out written (llm.c's
// overwrites; += where asked). N need not be a multiple of the vector (a
// scalar tail), but the arrays must be 16-byte aligned (the harness's are).
#include "../harness/llmc_cuda.hpp"
#include "peers.hpp"

#include <Kokkos_Core.hpp>

#include <stdexcept>
#include <string>

namespace llmk::perf::gelu_forward {
namespace {

constexpr int kThreads = 512;

using llmc::narrow;
using llmc::widen;

__device__ inline float gelu(float x) {
  const float s = 0.7978845608f, k = 0.044715f;
  return 0.5f * x * (1.0f + tanhf(s * (x + k * x * x * x)));
}

template <class T, bool Overwrite>
__global__ void __launch_bounds__(kThreads) gelu_forward_vec(T* out, const T* inp, index_t N) {
  constexpr int V = llmc::Vec16<T>::size;
  const index_t i = (index_t(blockIdx.x) * kThreads + threadIdx.x) * V;
  if (i + V <= N) {
    llmc::Vec16<T> x, y;
    x.raw = __ldcs(reinterpret_cast<const int4*>(inp + i));
    if (!Overwrite) y.raw = *reinterpret_cast<const int4*>(out + i);
#pragma unroll
    for (int u = 0; u < V; ++u) {
      const float g = gelu(widen(x.e[u]));
      y.e[u] = narrow<T>(Overwrite ? g : widen(y.e[u]) + g);
    }
    *reinterpret_cast<int4*>(out + i) = y.raw;
  } else {
    for (index_t j = i; j < N; ++j) {
      const float g = gelu(widen(inp[j]));
      out[j] = narrow<T>(Overwrite ? g : widen(out[j]) + g);
    }
  }
}

template <class T>
void run_typed(const PeerArgs& a) {
  if (a.N == 0) return;
  constexpr int V = llmc::Vec16<T>::size;
  const unsigned blocks = unsigned(((a.N + V - 1) / V + kThreads - 1) / kThreads);
  const cudaStream_t stream = Kokkos::Cuda().cuda_stream();
  T* out = static_cast<T*>(a.out);
  const T* inp = static_cast<const T*>(a.inp);
  if (a.overwrite_out)
    gelu_forward_vec<T, true><<<blocks, kThreads, 0, stream>>>(out, inp, a.N);
  else
    gelu_forward_vec<T, false><<<blocks, kThreads, 0, stream>>>(out, inp, a.N);
  llmc::check(cudaGetLastError(), "gelu_forward llmc-style", "kernel launch");
}

void llmc_style(const PeerArgs& a) {
  llmc::with_element_type(a.precision, "gelu_forward llmc-style",
                          [&](auto t) { run_typed<decltype(t)>(a); });
}

}  // namespace

std::vector<Peer> llmc_peers() {
  return llmc::llmc_style_peer<PeerArgs>(
      llmc_style,
      "llm.c's algorithm (gelu_forward's idea, written independently): a thread per 16-byte "
      "vector, 512-thread blocks, streaming loads of inp");
}

}  // namespace llmk::perf::gelu_forward
