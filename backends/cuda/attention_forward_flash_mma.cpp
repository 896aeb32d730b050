// "flash_mma" for attention_forward (ops/attention_forward/flash_mma.hpp says
// what it computes): flash-attention 2's forward on bf16 tensor cores, one
// kernel. A block of 64 queries of one (b, h), 4 warps of 16 rows, walks the
// key blocks at or before it (the heaviest query blocks start first), the k
// and v tiles double buffered by cp.async; per half tile of 32 keys a warp
// computes S = q·kᵀ (its 16 rows × 32 keys) from q's A fragments held in
// registers, scales it to log₂ units, masks the pairs after the diagonal
// (−∞), raises its rows' running maxima (each row's 4 lanes agree through
// two shuffles), rescales its sums and accumulators, and adds P·v with P as
// the A operand straight from the accumulators (rounded to bf16). At the
// end a quad's partial sums meet (two shuffles) and out = acc / l, lse =
// (m + log₂ l)·ln 2. The tiles, fragments and products are the recompute
// backward's (attention_flash_mma_tiles.hpp).
//
// Measured on an H100 at GPT-2 124M's layer (B 8, T 1024, NH 12, bf16,
// device time; results/h100/G20-*, G21-*): 0.087 ms (148 TFLOP/s on the
// causal half) against 0.114 while the epilogue's loops were left rolled
// (acc then indexed at run time: a 144-byte stack frame, acc in local
// memory); GPT-2 124M's bf16 training step 18.50-18.68 -> 18.21-18.27 ms.
// Tried: two m-tiles a warp (blocks of 128 queries, each k and v fragment
// feeding two mma, half the shared-memory loads a product): 0.098 ms, 232
// registers a thread, two blocks an SM. PyTorch's SDPA kernel: 0.047 ms.
#include <ops/attention_backward_recompute/flash_mma.hpp>  // flash_mma_device_has_mma
#include <ops/attention_forward/flash_mma.hpp>

#include <backends/cuda/attention_flash_mma_tiles.hpp>
#include <backends/cuda/cuda_checks.hpp>
#include <llmk/bf16.hpp>

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace llmk::op::attention_forward {
namespace {

namespace fm = attention_backward_recompute::flash_mma;
using backends::ptx::commit_group;
using backends::ptx::exp2_approx;
using backends::ptx::wait_group;
using fm::kBlock;
using fm::kHalf;
using fm::kHead;
using fm::kLog2e;
using fm::kThreads;
using fm::Tile;
static_assert(kBlock == kFlashMmaBlock && kHead == kFlashMmaMaxHead, "flash_mma.hpp's tiles");

constexpr float kLn2 = 0.6931471805599453f;

struct ForwardArgs {
  bf16* out;
  float* lse;
  const bf16* qkv;
  index_t T, C, NH;
  int HS;
  float alpha;
  bool overwrite;
  bool vector_loads;  // every row of q, k, v 16-byte aligned, HS = 64
  bool pair_stores;   // out's rows 4-byte aligned: a lane stores its two channels at once
};

__global__ void __launch_bounds__(kThreads) forward_kernel(const ForwardArgs a) {
  __shared__ __align__(16) Tile sk[2], sv[2];
  const index_t bh = blockIdx.x, b = bh / a.NH, h = bh % a.NH;
  const index_t blocks = (a.T + kBlock - 1) / kBlock;
  const index_t qb = blocks - 1 - index_t(blockIdx.y);  // the heaviest first
  const index_t t0 = qb * kBlock;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, c = lane % 4;
  const index_t ld = 3 * a.C;
  const bf16* const q = a.qkv + b * a.T * ld + h * a.HS;

  // This warp's queries as A fragments, staged through buffer 1; the first
  // key and value tiles into buffer 0.
  std::uint32_t qf[4][4];
  fm::load_tile(sk[1], q, ld, t0, a.T, a.HS, a.vector_loads);
  commit_group();
  fm::load_tile(sk[0], q + a.C, ld, 0, a.T, a.HS, a.vector_loads);
  fm::load_tile(sv[0], q + 2 * a.C, ld, 0, a.T, a.HS, a.vector_loads);
  commit_group();
  wait_group<1>();
  __syncthreads();
  fm::load_a(qf, sk[1], warp * 16);
  __syncthreads();  // buffer 1 is free

  float acc[8][4] = {};
  // Rows g and g + 8 of this warp: the running maximum of α·log₂e·s (the
  // same in the row's 4 lanes) and this lane's part of the running sum.
  float most[2] = {-__int_as_float(0x7f800000), -__int_as_float(0x7f800000)};
  float sum[2] = {0.f, 0.f};
  const float scale2 = a.alpha * kLog2e;
  const index_t t_base = t0 + warp * 16;
  int buf = 0;
  for (index_t kb = 0; kb <= qb; ++kb, buf ^= 1) {
    const index_t u0 = kb * kBlock;
    if (kb < qb) {
      fm::load_tile(sk[buf ^ 1], q + a.C, ld, u0 + kBlock, a.T, a.HS, a.vector_loads);
      fm::load_tile(sv[buf ^ 1], q + 2 * a.C, ld, u0 + kBlock, a.T, a.HS, a.vector_loads);
    }
    commit_group();
    wait_group<1>();  // this tile's group has landed
    __syncthreads();
    for (int half = 0; half < kBlock; half += kHalf) {
      // Keys u0 + half .. all after this warp's queries: all masked.
      if (u0 + half > t_base + 15) continue;
      float s[4][4];
      fm::product_with_rows(s, qf, sk[buf], half);  // S: rows queries, columns keys
      // Every pair causal (all but the diagonal's): no per-element checks.
      const bool whole = u0 + half + kHalf - 1 <= t_base;
      float m[2] = {most[0], most[1]};
      for (int nt = 0; nt < 4; ++nt)
        for (int j = 0; j < 4; ++j) {
          const index_t t = t_base + g + 8 * (j / 2), u = u0 + half + nt * 8 + 2 * c + j % 2;
          const float x = whole || u <= t ? s[nt][j] * scale2 : -__int_as_float(0x7f800000);
          s[nt][j] = x;
          m[j / 2] = fmaxf(m[j / 2], x);  // a NaN never raises it: it stays in P
        }
      for (int r = 0; r < 2; ++r) {
        m[r] = fmaxf(m[r], __shfl_xor_sync(0xffffffffu, m[r], 1));
        m[r] = fmaxf(m[r], __shfl_xor_sync(0xffffffffu, m[r], 2));
      }
      // exp2(−∞ − m) = 0 the first time a row is seen.
      const float rescale[2] = {exp2_approx(most[0] - m[0]), exp2_approx(most[1] - m[1])};
      for (int r = 0; r < 2; ++r) most[r] = m[r], sum[r] *= rescale[r];
      for (int nt = 0; nt < 4; ++nt)
        for (int j = 0; j < 4; ++j) {
          const float p = exp2_approx(s[nt][j] - m[j / 2]);  // masked: exp2(−∞) = 0
          s[nt][j] = p;
          sum[j / 2] += p;
        }
      for (int nd = 0; nd < 8; ++nd)
        for (int j = 0; j < 4; ++j) acc[nd][j] *= rescale[j / 2];
      fm::accumulate_times_tile(acc, s, sv[buf], half);  // acc += P·v
    }
    __syncthreads();  // buffer buf is free for tile kb + 2
  }
  for (int r = 0; r < 2; ++r) {
    sum[r] += __shfl_xor_sync(0xffffffffu, sum[r], 1);
    sum[r] += __shfl_xor_sync(0xffffffffu, sum[r], 2);
  }
  // Unrolled, so that acc is indexed by constants (the note at the top).
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const index_t t = t_base + g + 8 * r;
    if (t >= a.T) continue;
    if (c == 0) a.lse[bh * a.T + t] = most[r] * kLn2 + logf(sum[r]);
    bf16* const row = a.out + (b * a.T + t) * a.C + h * a.HS;
#pragma unroll
    for (int nt = 0; nt < 8; ++nt) {
      const int d = nt * 8 + 2 * c;
      const float v0 = acc[nt][2 * r] / sum[r], v1 = acc[nt][2 * r + 1] / sum[r];
      if (a.pair_stores && a.overwrite && d + 1 < a.HS) {
        *reinterpret_cast<std::uint32_t*>(row + d) = fm::pack(v0, v1);
        continue;
      }
      if (d < a.HS) row[d] = bf16(a.overwrite ? v0 : float(row[d]) + v0);
      if (d + 1 < a.HS) row[d + 1] = bf16(a.overwrite ? v1 : float(row[d + 1]) + v1);
    }
  }
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

}  // namespace

bool flash_mma_forward_device_has_mma() {
  return attention_backward_recompute::flash_mma_device_has_mma();
}

template <class ExecSpace, class P>
void flash_mma_forward(const ExecSpace& exec, const Problem<ExecSpace, P>& p) {
  static_assert(std::is_same_v<P, Bf16>, "flash_mma: bf16 only");
  const auto& f = p.args;
  ForwardArgs a;
  a.out = f.out, a.lse = f.lse, a.qkv = f.qkv;
  a.T = f.T, a.C = f.C, a.NH = f.NH, a.HS = int(f.HS());
  a.alpha = f.alpha, a.overwrite = f.overwrite;
  a.vector_loads = a.HS == kHead && aligned16(f.qkv) && f.C % 8 == 0;
  a.pair_stores = reinterpret_cast<std::uintptr_t>(f.out) % 4 == 0 && f.C % 2 == 0 && a.HS % 2 == 0;
  const index_t blocks = (f.T + kBlock - 1) / kBlock;  // within FlashMma::runs
  const dim3 grid(unsigned(f.B * f.NH), unsigned(blocks));
  backends::DeviceScope device(exec.cuda_device());
  forward_kernel<<<grid, kThreads, 0, exec.cuda_stream()>>>(a);
  backends::check_cuda(cudaGetLastError(), "attention_forward flash_mma kernel launch");
}

template void flash_mma_forward<Kokkos::Cuda, Bf16>(const Kokkos::Cuda&,
                                                    const Problem<Kokkos::Cuda, Bf16>&);

}  // namespace llmk::op::attention_forward
