// The classifier backward's "row_in_shared" (ops/classifier_backward/
// row_in_shared.hpp says what and why): a block of kThreads a bf16 row,
// the row copied once into shared memory.
#include <ops/classifier_backward/row_in_shared.hpp>

#include <backends/cuda/cuda_checks.hpp>
#include <backends/cuda/ptx.hpp>
#include <kernels/async_copy.hpp>
#include <ops/classifier_backward/kernels.hpp>
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
constexpr int kSlotBytes = 16 * ((int(sizeof(float)) * 2 * (kWarps + 1) + 15) / 16);  // the merge's

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
  return backends::ptx::exp2_approx(d * kernels::kLog2e);
}

// Adds 8 real elements (columns below V) to o, Online::add without its
// per-element column checks: the pack's max first, the sum rescaled only
// when the max grows (exp(0) is never taken for an unchanged max).
__device__ inline void add_real(Online& o, const float (&f)[kPack]) {
  float pack_max = kernels::neg_inf();
#pragma unroll
  for (int u = 0; u < kPack; ++u) pack_max = f[u] > pack_max ? f[u] : pack_max;
  if (pack_max > o.max) {
    o.sum *= exp_of(o.max - pack_max);  // 0 for the first finite max
    o.max = pack_max;
  }
  if (o.max == kernels::neg_inf()) {  // −inf so far (0 to the sum), or a NaN that must come through
#pragma unroll
    for (int u = 0; u < kPack; ++u)
      if (f[u] != kernels::neg_inf()) o.sum += f[u];
    return;
  }
  float sum = o.sum;
#pragma unroll
  for (int u = 0; u < kPack; ++u) sum += exp_of(f[u] - o.max);
  o.sum = sum;
}

using backends::ptx::commit_group;
using backends::ptx::wait_until_pending;

// Two floats rounded to bf16 (nearest even, as bf16(float)) in one word, lo
// in the low half: one cvt where two and their merge took ~4 instructions.
__device__ inline std::uint32_t bf16x2(const float lo, const float hi) {
  std::uint32_t r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// A warp's (max, sum) pairs merged by shuffles in a fixed tree: lane 0's.
__device__ inline Online warp_merge(Online mine) {
  for (int offset = 16; offset > 0; offset /= 2) {
    const float max = __shfl_down_sync(0xffffffffu, mine.max, offset);
    const float sum = __shfl_down_sync(0xffffffffu, mine.sum, offset);
    mine.merge(max, sum);
  }
  return mine;
}

// The block's (max, sum) pair: each warp's lanes merged, then the 32 warps'
// pairs by warp 0 in the same tree (the same in every block whatever the
// warps' timing). One thread merging them in order left 1023 waiting
// through 31 dependent merges a row.
static_assert(kWarps == 32, "warp 0 merges one pair a lane");
__device__ inline Online block_merge(Online mine, float* slots) {
  mine = warp_merge(mine);
  const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
  if (lane == 0) slots[2 * warp] = mine.max, slots[2 * warp + 1] = mine.sum;
  __syncthreads();
  if (warp == 0) {
    Online pair;
    pair.max = slots[2 * lane], pair.sum = slots[2 * lane + 1];
    const Online total = warp_merge(pair);
    if (lane == 0) slots[2 * kWarps] = total.max, slots[2 * kWarps + 1] = total.sum;
  }
  __syncthreads();
  Online total;
  total.max = slots[2 * kWarps], total.sum = slots[2 * kWarps + 1];
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

  // Each thread copies its packs p = threadIdx.x + k·kThreads, one cp.async
  // group a pack, and adds each to its running max and sum as it lands: it
  // reads only its own copies (no barrier), overlapped with the row's
  // arrival. The write pass takes the same packs; only the loss's x_t is
  // another thread's, read after the merge's barriers.
  for (int p = threadIdx.x; p < packs; p += kThreads) {
    kernels::AsyncCopy::copy<16>(reinterpret_cast<float*>(row + p * kPack),
                                 reinterpret_cast<const float*>(x + p * kPack), true);
    commit_group();
  }
  const int mine = packs > int(threadIdx.x) ? (packs - 1 - int(threadIdx.x)) / kThreads + 1 : 0;
  // The row's max and sum of exp(x − max), online: each pack added as it
  // lands (a NaN is passed over by the max and comes through the sum).
  Online own;
  for (int k = 0; k < mine; ++k) {
    wait_until_pending(mine - 1 - k);
    const int p = int(threadIdx.x) + k * kThreads;
    float f[kPack];
    unpack(row, p, f);
    if (p < full) {
      add_real(own, f);
    } else {
      own.add(f, p * kPack, V);
    }
  }
  const Online whole = block_merge(own, slots);
  const float max = whole.max, sum = whole.sum;

  const int t = a.targets[m];
  const float scale = a.dloss != nullptr ? a.dloss[m] : a.dloss_value;
  const float prob_scale = scale / sum;
  for (int p = threadIdx.x; p < packs; p += kThreads) {
    float f[kPack];
    unpack(row, p, f);
    Pack out{};
    if (p < full && p != t / kPack) {  // real columns, not the target's
#pragma unroll
      for (int w = 0; w < kPack / 2; ++w)
        out.word[w] = bf16x2(exp_of(f[2 * w] - max) * prob_scale,
                             exp_of(f[2 * w + 1] - max) * prob_scale);
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
