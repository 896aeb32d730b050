// The classifier backward's "row_in_shared" (ops/classifier_backward/
// row_in_shared.hpp says what and why): a block of kThreads a bf16 row,
// the row copied once into shared memory.
#include <ops/classifier_backward/row_in_shared.hpp>

#include <backends/cuda/cuda_checks.hpp>
#include <kernels/async_copy.hpp>
#include <kernels/classifier_backward.hpp>
#include <kernels/pack.hpp>
#include <llmk/bf16.hpp>

#include <cuda_runtime.h>

#include <cstdint>

namespace llmk::op::classifier_backward {
namespace {

using kernels::Online;
using Pack = kernels::PackOfSize<bf16, 8>;

constexpr int kThreads = 1024;  // 32 warps a row, two rows an SM
constexpr int kWarps = kThreads / 32;
constexpr int kPack = 8;  // bf16 of a 16-byte copy
constexpr int kSlotBytes = 16 * ((int(sizeof(float)) * (kWarps + 1) + 15) / 16);  // the reductions'

struct Args {
  bf16* dlogits;
  const bf16* logits;
  float* losses;             // or null
  const std::int32_t* targets;
  const float* dloss;        // or null: dloss_value
  float dloss_value;
  int V, Vp;
};

// A 16-byte store that L2 may evict first: dlogits is not read again here.
__device__ inline void store_streaming(bf16* p, const Pack& v) {
  __stcs(reinterpret_cast<int4*>(p), *reinterpret_cast<const int4*>(&v));
}

// exp(d) for d = x − max ≤ 0: the hardware's ex2, flushing results below
// 2⁻¹²⁶ to 0 (what exp2f adds around it is 2 of the ~10 instructions an
// element costs here: the kernel is bound by instructions, not memory).
__device__ inline float exp_of(const float d) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(d * kernels::kLog2e));
  return r;
}

// A value of the block: each warp's, then the warps' in order by one thread
// (the same in every block whatever the warps' timing). Op: max or sum.
template <class Op>
__device__ inline float block_reduce(float mine, float* slots, Op op) {
  for (int offset = 16; offset > 0; offset /= 2)
    mine = op(mine, __shfl_down_sync(0xffffffffu, mine, offset));
  if (threadIdx.x % 32 == 0) slots[threadIdx.x / 32] = mine;
  __syncthreads();
  if (threadIdx.x == 0) {
    float total = slots[0];
    for (int w = 1; w < kWarps; ++w) total = op(total, slots[w]);
    slots[kWarps] = total;
  }
  __syncthreads();
  const float total = slots[kWarps];
  __syncthreads();  // slots are reused by the next reduction
  return total;
}

// The 8 elements of a pack as floats.
__device__ inline void unpack(const bf16* row, const int p, float (&f)[kPack]) {
  const Pack v = *reinterpret_cast<const Pack*>(row + p * kPack);
#pragma unroll
  for (int u = 0; u < kPack; ++u) f[u] = v.get(u);
}

__global__ void __launch_bounds__(kThreads, 2) classifier_row_in_shared(const Args a) {
  extern __shared__ __align__(16) unsigned char shared[];
  float* const slots = reinterpret_cast<float*>(shared);  // kWarps + 1
  bf16* const row = reinterpret_cast<bf16*>(shared + kSlotBytes);
  // The last rows first: the classifier's matmul wrote them last (as llm.c).
  const index_t m = index_t(gridDim.x) - 1 - blockIdx.x;
  const bf16* const x = a.logits + m * a.Vp;
  bf16* const dx = a.dlogits + m * a.Vp;
  const int packs = a.Vp / kPack, full = a.V / kPack;  // packs [0, full) hold real columns only
  const int V = a.V;

  for (int p = threadIdx.x; p < packs; p += kThreads) {
    kernels::AsyncCopy::copy<16>(reinterpret_cast<float*>(row + p * kPack),
                                 reinterpret_cast<const float*>(x + p * kPack), true);
  }
  kernels::AsyncCopy::wait_all();
  __syncthreads();

  // The max (a NaN is passed over here and comes through the sum), then
  // the sum of exp(x − max), each from the shared row.
  float max = kernels::neg_inf();
  for (int p = threadIdx.x; p < packs; p += kThreads) {
    float f[kPack];
    unpack(row, p, f);
#pragma unroll
    for (int u = 0; u < kPack; ++u)
      if ((p < full || p * kPack + u < V) && f[u] > max) max = f[u];
  }
  max = block_reduce(max, slots, [](float l, float r) { return r > l ? r : l; });
  float sum = 0;
  if (max == kernels::neg_inf()) {
    // Every real logit −inf (or none): "fused"'s Online pairs say what comes out.
    Online o;
    for (int p = threadIdx.x; p < packs; p += kThreads) {
      float f[kPack];
      unpack(row, p, f);
      o.add(f, p * kPack, V);
    }
    sum = o.sum;
  } else {
    for (int p = threadIdx.x; p < packs; p += kThreads) {
      float f[kPack];
      unpack(row, p, f);
#pragma unroll
      for (int u = 0; u < kPack; ++u)
        if (p < full || p * kPack + u < V) sum += exp_of(f[u] - max);
    }
  }
  sum = block_reduce(sum, slots, [](float l, float r) { return l + r; });

  const int t = a.targets[m];
  const float scale = a.dloss != nullptr ? a.dloss[m] : a.dloss_value;
  const float prob_scale = scale / sum;
  for (int p = threadIdx.x; p < packs; p += kThreads) {
    float f[kPack];
    unpack(row, p, f);
    Pack out{};
    if (p < full && p != t / kPack) {  // real columns, not the target's
#pragma unroll
      for (int u = 0; u < kPack; ++u) out.set(u, exp_of(f[u] - max) * prob_scale);
    } else {
#pragma unroll
      for (int u = 0; u < kPack; ++u) {
        const int c = p * kPack + u;
        const float prob = exp_of(f[u] - max) / sum;
        out.set(u, c < V ? (prob - (c == t ? 1.0f : 0.0f)) * scale : 0.0f);
      }
    }
    store_streaming(dx + p * kPack, out);
  }
  if (threadIdx.x == 0 && a.losses != nullptr) {
    const float x_t = t >= 0 && t < V ? to_float(row[t]) : kernels::quiet_nan();
    a.losses[m] = logf(sum) + (max - x_t);
  }
}

std::size_t shared_bytes(int Vp) { return kSlotBytes + std::size_t(Vp) * sizeof(bf16); }

}  // namespace

template <class ExecSpace>
void row_in_shared_run(const ExecSpace& exec, const kernels::ClassifierArgs<ExecSpace, bf16>& a) {
  const auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  const index_t M = index_t(a.logits.extent(0));
  const int Vp = int(a.logits.extent(1));
  if (Vp % kPack != 0 || !aligned(a.logits.data()) || !aligned(a.dlogits.data())) {
    kernels::run_classifier_rows(exec, a);  // element by element
    return;
  }
  if (M == 0) return;
  const Args args{a.dlogits.data(), a.logits.data(),
                  a.losses.extent(0) != 0 ? a.losses.data() : nullptr, a.targets.data(),
                  a.dloss.extent(0) != 0 ? a.dloss.data() : nullptr, a.dloss_value, a.V, Vp};
  const std::size_t bytes = shared_bytes(Vp);
  backends::check_cuda(cudaFuncSetAttribute(classifier_row_in_shared,
                                            cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)),
                       "classifier row_in_shared: cudaFuncSetAttribute (a row's shared memory)");
  classifier_row_in_shared<<<unsigned(M), kThreads, bytes, exec.cuda_stream()>>>(args);
  backends::check_cuda(cudaGetLastError(), "classifier row_in_shared: kernel launch");
}

template void row_in_shared_run<Kokkos::Cuda>(const Kokkos::Cuda&,
                                              const kernels::ClassifierArgs<Kokkos::Cuda, bf16>&);

}  // namespace llmk::op::classifier_backward
