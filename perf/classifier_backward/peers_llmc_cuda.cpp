// llmc-style: the classifier backward as llm.c trains GPT-2 on a GPU (the
// algorithm of its fused_classifier, llmc/fused_classifier.cuh), written
// here from the algorithm, independent of llmk and not copied from llm.c:
//  - a block of 1024 threads per row, the rows in reverse order (the last
//    ones are those the classifier's matmul wrote last);
//  - each thread walks its 16-byte vectors of the row's V real columns from
//    the end backwards (the elements past the last whole vector one by one),
//    keeping a running max and a sum of exp(x − max) rescaled as the max
//    grows; the block reduces the maxima (warp shuffles, then the warps'
//    through shared memory), rescales each thread's sum to the block's max
//    and reduces the sums the same way;
//  - thread 0 computes the loss from the target's logit (−log p), and the
//    block synchronizes before anything is written (the logits are
//    overwritten in place);
//  - a second pass reads the row forwards (its start, read last by the first
//    pass, is the likeliest in cache) and writes (p − [c = t])·dloss with
//    streaming stores (__stcs: the gradients should not evict the logits).
// As llm.c's production build (--use_fast_math), exponentials are __expf.
// Where it differs from llm.c (our choices): the padded columns [V, Vp) are
// written as zeros, as llmk writes them (llm.c leaves them as they are), so
// that both move the same bytes and pass the same check; losses are set (=)
// rather than accumulated (llm.c's −=).
#include "../harness/llmc_cuda.hpp"
#include "peers.hpp"

#include <Kokkos_Core.hpp>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace llmk::perf::classifier_backward {
namespace {

void check(cudaError_t err, const char* what) { llmc::check(err, "classifier llmc-style", what); }

constexpr int kThreads = 1024;

using llmc::narrow;
using llmc::widen;

// 16 bytes of T.
template <class T>
struct alignas(16) Vec {
  static constexpr int n = 16 / int(sizeof(T));
  T e[n];
};

__device__ inline void online_add(float& max, float& sum, float x) {
  const float m = fmaxf(max, x);
  sum = sum * __expf(max - m) + __expf(x - m);
  max = m;
}

// A value reduced over the block: op over the warp by shuffles, the warps'
// results through shared memory.
template <class Op>
__device__ float block_reduce(float v, float* shared, Op op) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int o = 16; o > 0; o /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  __syncthreads();  // shared is reused between calls
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  v = lane < int(blockDim.x / 32) ? shared[lane] : shared[0];
  for (int o = 16; o > 0; o /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

template <class T>
__global__ void __launch_bounds__(kThreads) classifier_kernel(T* logits, float* losses,
                                                             const std::int32_t* targets,
                                                             float dloss, int V, int Vp) {
  __shared__ float shared[32];
  constexpr int n = Vec<T>::n;
  const std::int64_t row = std::int64_t(gridDim.x) - 1 - blockIdx.x;
  T* const x = logits + row * Vp;
  const int target = targets[row];
  const int whole = V / n;  // whole vectors of real columns
  float max = -INFINITY, sum = 0.0f;
  for (int c = whole * n + int(threadIdx.x); c < V; c += blockDim.x) online_add(max, sum, widen(x[c]));
  for (int i = whole - 1 - int(threadIdx.x); i >= 0; i -= blockDim.x) {
    const Vec<T> v = *reinterpret_cast<const Vec<T>*>(x + i * n);
    for (int k = 0; k < n; ++k) online_add(max, sum, widen(v.e[k]));
  }
  const float row_max = block_reduce(max, shared, [](float a, float b) { return fmaxf(a, b); });
  sum *= max == -INFINITY ? 0.0f : __expf(max - row_max);
  const float row_sum = block_reduce(sum, shared, [](float a, float b) { return a + b; });
  const float inv_sum = 1.0f / row_sum;
  if (threadIdx.x == 0) losses[row] = logf(row_sum) + row_max - widen(x[target]);
  __syncthreads();  // the loss read its logit before any thread overwrites it
  const bool aligned = Vp % n == 0;
  const int vectors = aligned ? Vp / n : 0;
  for (int i = threadIdx.x; i < vectors; i += blockDim.x) {
    Vec<T> v = *reinterpret_cast<const Vec<T>*>(x + i * n);
    for (int k = 0; k < n; ++k) {
      const int c = i * n + k;
      const float p = __expf(widen(v.e[k]) - row_max) * inv_sum;
      v.e[k] = narrow<T>(c < V ? (p - (c == target ? 1.0f : 0.0f)) * dloss : 0.0f);
    }
    __stcs(reinterpret_cast<float4*>(x + i * n), *reinterpret_cast<const float4*>(&v));
  }
  for (int c = vectors * n + int(threadIdx.x); c < Vp; c += blockDim.x) {
    const float p = __expf(widen(x[c]) - row_max) * inv_sum;
    x[c] = narrow<T>(c < V ? (p - (c == target ? 1.0f : 0.0f)) * dloss : 0.0f);
  }
}

template <class T>
void run_llmc(const PeerArgs& a) {
  if (a.M == 0) return;
  if (a.M > std::int64_t(INT32_MAX) || a.Vp > std::int64_t(INT32_MAX) / 2)
    throw std::invalid_argument("llmc-style: M and Vp must fit an int grid and int columns");
  if (reinterpret_cast<std::uintptr_t>(a.logits) % 16 != 0)
    throw std::invalid_argument("llmc-style: the logits must be 16-byte aligned");
  // On Kokkos' default instance's stream, which the harness times.
  const cudaStream_t stream = Kokkos::Cuda().cuda_stream();
  classifier_kernel<T><<<unsigned(a.M), kThreads, 0, stream>>>(static_cast<T*>(a.logits), a.losses,
                                                    a.targets, a.dloss, int(a.V), int(a.Vp));
  check(cudaGetLastError(), "launch");
}

}  // namespace

std::vector<Peer> llmc_peers() {
  Peer p;
  p.name = "llmc-style";
  p.backends = {"Cuda"};
  p.precisions = {"fp32", "bf16"};
  p.run = [](const PeerArgs& a) {
    if (a.precision == "bf16")
      run_llmc<__nv_bfloat16>(a);
    else
      run_llmc<float>(a);
  };
  p.description =
      "llmc-style: llm.c's fused_classifier algorithm (a 1024-thread block per row, 16-byte "
      "loads, online max and sum read backwards, a second forward read, streaming stores, "
      "__expf), in our own code; also zeroes the padded columns as llmk does";
  return {p};
}

}  // namespace llmk::perf::classifier_backward
