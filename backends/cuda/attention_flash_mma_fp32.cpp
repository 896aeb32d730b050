// "flash_mma" in fp32 (ops/attention_backward_recompute/flash_mma.hpp): the
// bf16 kernels' algorithm (attention_flash_mma.cpp: a block of 64 keys walks
// the query tiles at or after it for dk and dv, a block of 64 queries the
// key tiles at or before it for dq; no atomics) with float operands on TF32
// tensor cores, each product as three: a = a_big + a_small (a_big a
// truncated to TF32, a_small the rest rounded to TF32), a·b ≈ a_small·b_big
// + a_big·b_small + a_big·b_big, accumulated in float (the "3xTF32" of
// CUTLASS, which PyTorch's fp32 SDPA "efficient" backward runs too). A
// product then errs by at most ≈ 2⁻¹⁹ relative (the dropped a_small·b_small,
// the rests' roundings), where one TF32 product errs by ≈ 2⁻¹¹: measured on
// the H200 at GPT-2's B 8, T 1024, relative L2 2.3e-6 (float32 sums 7e-7),
// within fp32's tolerance 5e-5 (ops/attention_backward/reference/
// compare.hpp), which two products (a_big·b_small left out) fail: 9e-5 to
// 5e-4 on the test shapes (tests/README.md, planted bugs).
//
// mma.sync m16n8k8 (TF32): A 16 × 8, lane (g, c) holds (g, c), (g + 8, c),
// (g, c + 4), (g + 8, c + 4); B 8 × 8 holds (k c, n g) and (k c + 4, n g);
// the accumulators are the bf16 kernels' m16n8 (attention_flash_mma.hpp).
// P and dS, accumulators, become A operands without a shuffle: a lane's
// columns 2c and 2c + 1 of an n-tile serve as its k indices c and c + 4, and
// the B rows it loads are permuted alike (k index c is row 2c, c + 4 row
// 2c + 1): a sum over k does not depend on its order of terms' names.
//
// Tiles: the 16 × 64 A operands a warp keeps (k, v or q, dout_h) are loaded
// once from global memory into registers; the streamed tiles are 32 rows of
// 64 floats in shared memory, double buffered by cp.async, at a row stride
// of 68 floats: every fragment load of the kernels (rows g, columns c; rows
// 2c and 2c + 1, columns g) falls on 32 distinct banks. 4 tiles of 8.5 KiB.
#include <ops/attention_backward_recompute/flash_mma.hpp>

#include <backends/cuda/attention_flash_mma.hpp>
#include <backends/cuda/cuda_checks.hpp>

#include <cuda_runtime.h>

#include <cstdint>

namespace llmk::op::attention_backward_recompute::flash_mma {
namespace {

using backends::ptx::commit_group;
using backends::ptx::cp_async16;
using backends::ptx::wait_group;

constexpr int kRows = 32;    // a streamed tile's positions
constexpr int kStride = 68;  // a shared row's floats (272 bytes: 16-byte aligned rows)
using Tile = float[kRows][kStride];

// x = big + small + O(2⁻²¹·|x|), both TF32 bit patterns (the low 13 of 32
// bits zero): big is x truncated, small the rest rounded to nearest (ties
// away from zero). Integer operations: cvt.rna.tf32.f32 compiles to ~10
// instructions on sm_90 (compares and selects around NaN), where this is 4;
// measured on the H200 (B 8, T 1024): 1.68 ms with cvt, 1.08 with these.
// A NaN stays NaN: big keeps the exponent and the mantissa's high bits (a
// NaN whose bits there are zero becomes ±∞), and small is NaN (NaN or
// ∞ − ∞), so every product with it is NaN; so is every product with ±∞.
__device__ __forceinline__ void split(float x, std::uint32_t& big, std::uint32_t& small) {
  big = __float_as_uint(x) & 0xffffe000u;
  const float rest = x - __uint_as_float(big);
  small = (__float_as_uint(rest) + 0x1000u) & 0xffffe000u;
}

// D (16×8) += A (16×8, TF32) · B (8×8, TF32).
__device__ __forceinline__ void mma(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                    std::uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
  (void)d, (void)a, (void)b0, (void)b1;
  __trap();  // refused on the host before a launch (flash_mma_device_has_mma)
#endif
}

// A float A fragment (four values) and B fragment (two) as three TF32 products.
struct SplitA {
  std::uint32_t big[4], small[4];
  SplitA() = default;
  __device__ __forceinline__ explicit SplitA(const float (&v)[4]) {
    for (int i = 0; i < 4; ++i) split(v[i], big[i], small[i]);
  }
};
__device__ __forceinline__ void mma3(float (&d)[4], const SplitA& a, float b0, float b1) {
  std::uint32_t b0_big, b0_small, b1_big, b1_small;
  split(b0, b0_big, b0_small);
  split(b1, b1_big, b1_small);
  mma(d, a.small, b0_big, b1_big);  // the small terms first, the big last
  mma(d, a.big, b0_small, b1_small);
  mma(d, a.big, b0_big, b1_big);
}

// A streamed tile: rows [row0, row0 + 32) of the (b, h) head at `base` (row
// stride `ld`), channels [0, HS), zeros past T and past HS; by cp.async
// where the rows allow (the caller commits and waits before a barrier).
__device__ void load_tile(Tile& tile, const float* base, index_t ld, index_t row0, index_t T,
                          int HS, bool vector_loads) {
  if (vector_loads) {
    for (int i = threadIdx.x; i < kRows * 16; i += kThreads) {
      const int r = i / 16, c = (i % 16) * 4;
      const index_t row = row0 + r;
      cp_async16(&tile[r][c], base + (row < T ? row : 0) * ld + c, row < T);
    }
  } else {
    for (int i = threadIdx.x; i < kRows * kHead; i += kThreads) {
      const int r = i / kHead, c = i % kHead;
      const index_t row = row0 + r;
      tile[r][c] = row < T && c < HS ? base[row * ld + c] : 0.f;
    }
  }
}

// A warp's A fragments of rows r0..r0+15 (64 channels, 8 k-steps) from
// global memory, zeros past T and HS: loaded once per block.
__device__ void load_a(float (&a)[8][4], const float* base, index_t ld, index_t r0, index_t T,
                       int HS) {
  const int lane = threadIdx.x % 32, g = lane / 4, c = lane % 4;
  const auto at = [&](index_t row, int col) {
    return row < T && col < HS ? base[row * ld + col] : 0.f;
  };
  for (int ks = 0; ks < 8; ++ks) {
    a[ks][0] = at(r0 + g, ks * 8 + c);
    a[ks][1] = at(r0 + g + 8, ks * 8 + c);
    a[ks][2] = at(r0 + g, ks * 8 + c + 4);
    a[ks][3] = at(r0 + g + 8, ks * 8 + c + 4);
  }
}

// acc (16 × 32: 4 n-tiles) = a (16 × 64) · tileᵀ, the tile's 32 rows as the
// columns: acc[r][n] = Σ_d a[r][d]·tile[n][d].
__device__ __forceinline__ void product_with_rows(float (&acc)[4][4], const float (&a)[8][4],
                                                  const Tile& tile) {
  const int lane = threadIdx.x % 32, g = lane / 4, c = lane % 4;
  for (int nt = 0; nt < 4; ++nt)
    for (int j = 0; j < 4; ++j) acc[nt][j] = 0.f;
  for (int ks = 0; ks < 8; ++ks) {
    const SplitA as(a[ks]);
    for (int nt = 0; nt < 4; ++nt) {
      const float* row = tile[nt * 8 + g];
      mma3(acc[nt], as, row[ks * 8 + c], row[ks * 8 + c + 4]);
    }
  }
}

// acc (16 × 64 channels) += x (16 × 32 positions, accumulator layout) · the
// tile (32 positions × 64 channels). k-step kk is x's n-tile kk: the lane's
// columns 2c, 2c + 1 as its k indices c, c + 4, so B's are rows 2c, 2c + 1.
// The tile's products go into zeroed accumulators, added to acc by one
// float addition each: the tensor cores round their sums toward
// zero (products aligned to the largest and truncated, not rounded), so a
// long chain of mma into one accumulator drifts. Measured on the H200 (B 8,
// T 1024): relative error 1.16e-5 with every tile accumulated in place
// (T 16384 past the 5e-5 tolerance), against ~7e-7 for float32 sums; CUTLASS's
// 3xTF32 GEMMs add a fresh accumulator per main-loop step the same way.
__device__ __forceinline__ void accumulate_times_tile(float (&acc)[8][4], const float (&x)[4][4],
                                                      const Tile& tile) {
  const int lane = threadIdx.x % 32, g = lane / 4, c = lane % 4;
  SplitA as[4];
  for (int kk = 0; kk < 4; ++kk) {
    // (g, 2c), (g + 8, 2c), (g, 2c + 1), (g + 8, 2c + 1): k indices c, c, c + 4, c + 4.
    const float v[4] = {x[kk][0], x[kk][2], x[kk][1], x[kk][3]};
    as[kk] = SplitA(v);
  }
  // The tile's partial sums for all 8 n-tiles side by side: each k-step's
  // mma go to 8 independent accumulators (H200, B 8, T 1024: 1.134 ms; one
  // n-tile's 12 mma in a chain 1.253, 4 n-tiles at a time 1.176).
  float part[8][4] = {};
  for (int kk = 0; kk < 4; ++kk) {
    const float* row0 = tile[kk * 8 + 2 * c];
    const float* row1 = tile[kk * 8 + 2 * c + 1];
    for (int nd = 0; nd < 8; ++nd) mma3(part[nd], as[kk], row0[nd * 8 + g], row1[nd * 8 + g]);
  }
  for (int nd = 0; nd < 8; ++nd)
    for (int j = 0; j < 4; ++j) acc[nd][j] += part[nd][j];
}

// dk and dv of 64 keys (warp w: keys 16w..16w+15) over the query tiles of 32
// from the block's first key on. 2 blocks an SM (registers).
__global__ void __launch_bounds__(kThreads, 2) dkdv_kernel(const Args<float> a) {
  __shared__ __align__(16) Tile sq[2], sdo[2];
  __shared__ float slse[2][kRows], sD[2][kRows];
  const index_t bh = blockIdx.x, b = bh / a.NH, h = bh % a.NH;
  const index_t u0 = index_t(blockIdx.y) * kBlock;  // the heaviest (first) key blocks start first
  const int warp = threadIdx.x / 32, tid = threadIdx.x;
  const index_t ld = 3 * a.C;
  const float* const q = a.qkv + b * a.T * ld + h * a.HS;
  const float* const dout = a.dout + b * a.T * a.C + h * a.HS;
  const float* const lse = a.lse + bh * a.T;
  const float* const D = a.D + bh * a.T;
  const index_t u_base = u0 + warp * 16;
  const index_t tiles = (a.T + kRows - 1) / kRows, first = u0 / kRows;

  load_tile(sq[0], q, ld, first * kRows, a.T, a.HS, a.vector_loads);
  load_tile(sdo[0], dout, a.C, first * kRows, a.T, a.HS, a.vector_loads);
  commit_group();
  if (tid < kRows) {
    slse[0][tid] = row_value(lse, first * kRows, tid, a.T, kLog2e);
    sD[0][tid] = row_value(D, first * kRows, tid, a.T, 1.0f);
  }
  float kf[8][4], vf[8][4];  // this warp's keys and values, while the first tile lands
  load_a(kf, q + a.C, ld, u_base, a.T, a.HS);
  load_a(vf, q + 2 * a.C, ld, u_base, a.T, a.HS);

  float dk[8][4] = {}, dv[8][4] = {};
  const float scale2 = a.alpha * kLog2e;
  int buf = 0;
  for (index_t qt = first; qt < tiles; ++qt, buf ^= 1) {
    const index_t t0 = qt * kRows;
    const bool next = qt + 1 < tiles;
    float next_lse = 0.f, next_d = 0.f;
    if (next) {
      load_tile(sq[buf ^ 1], q, ld, t0 + kRows, a.T, a.HS, a.vector_loads);
      load_tile(sdo[buf ^ 1], dout, a.C, t0 + kRows, a.T, a.HS, a.vector_loads);
      if (tid < kRows) {
        next_lse = row_value(lse, t0 + kRows, tid, a.T, kLog2e);
        next_d = row_value(D, t0 + kRows, tid, a.T, 1.0f);
      }
    }
    commit_group();
    wait_group<1>();  // this tile's group has landed
    __syncthreads();
    // Unless every query of the tile comes before this warp's keys (all masked).
    if (t0 + kRows - 1 >= u_base) {
      float s[4][4], dp[4][4];
      product_with_rows(s, kf, sq[buf]);    // Sᵀ: rows keys, columns queries
      product_with_rows(dp, vf, sdo[buf]);  // dPᵀ
      // Every pair causal and below T: no per-element checks.
      const bool whole = t0 + kRows <= a.T && u_base + 15 <= t0;
      if (whole) {
        probabilities(s, dp, slse[buf], sD[buf], scale2, 0, [](int, int col, int& qi) {
          qi = col;
          return true;
        });
      } else {
        probabilities(s, dp, slse[buf], sD[buf], scale2, 0, [&](int row, int col, int& qi) {
          qi = col;
          const index_t u = u_base + row, t = t0 + col;
          return t < a.T && u <= t;
        });
      }
      accumulate_times_tile(dv, s, sdo[buf]);  // dv += Pᵀ·dout_h
      accumulate_times_tile(dk, dp, sq[buf]);  // dk += dSᵀ·q
    }
    __syncthreads();  // buffer buf is free for tile qt + 2
    if (next && tid < kRows) slse[buf ^ 1][tid] = next_lse, sD[buf ^ 1][tid] = next_d;
  }
  store(a, dk, b, h, 1, u_base, a.alpha);
  store(a, dv, b, h, 2, u_base, 1.0f);
}

// dq of 64 queries (warp w: queries 16w..16w+15) over the key tiles of 32 up
// to the block's last query.
__global__ void __launch_bounds__(kThreads, 2) dq_kernel(const Args<float> a) {
  __shared__ __align__(16) Tile sk[2], sv[2];
  __shared__ float slse[kBlock], sD[kBlock];
  const index_t bh = blockIdx.x, b = bh / a.NH, h = bh % a.NH;
  const index_t blocks = (a.T + kBlock - 1) / kBlock;
  const index_t t0 = (blocks - 1 - index_t(blockIdx.y)) * kBlock;  // the heaviest first
  const int warp = threadIdx.x / 32, tid = threadIdx.x;
  const index_t ld = 3 * a.C;
  const float* const q = a.qkv + b * a.T * ld + h * a.HS;
  const float* const dout = a.dout + b * a.T * a.C + h * a.HS;
  const index_t t_base = t0 + warp * 16;
  const index_t tiles = (a.T + kRows - 1) / kRows;
  const index_t last = (t0 + kBlock) / kRows < tiles ? (t0 + kBlock) / kRows : tiles;  // exclusive

  load_tile(sk[0], q + a.C, ld, 0, a.T, a.HS, a.vector_loads);
  load_tile(sv[0], q + 2 * a.C, ld, 0, a.T, a.HS, a.vector_loads);
  commit_group();
  if (tid < kBlock) {
    slse[tid] = row_value(a.lse + bh * a.T, t0, tid, a.T, kLog2e);
    sD[tid] = row_value(a.D + bh * a.T, t0, tid, a.T, 1.0f);
  }
  float qf[8][4], dof[8][4];  // this warp's queries and dout_h rows
  load_a(qf, q, ld, t_base, a.T, a.HS);
  load_a(dof, dout, a.C, t_base, a.T, a.HS);

  float dq[8][4] = {};
  const float scale2 = a.alpha * kLog2e;
  int buf = 0;
  for (index_t kt = 0; kt < last; ++kt, buf ^= 1) {
    const index_t u0 = kt * kRows;
    if (kt + 1 < last) {
      load_tile(sk[buf ^ 1], q + a.C, ld, u0 + kRows, a.T, a.HS, a.vector_loads);
      load_tile(sv[buf ^ 1], q + 2 * a.C, ld, u0 + kRows, a.T, a.HS, a.vector_loads);
    }
    commit_group();
    wait_group<1>();
    __syncthreads();
    // Unless every key of the tile comes after this warp's queries (all masked).
    if (u0 <= t_base + 15) {
      float s[4][4], dp[4][4];
      product_with_rows(s, qf, sk[buf]);    // S: rows queries, columns keys
      product_with_rows(dp, dof, sv[buf]);  // dP
      const bool whole = t_base + 16 <= a.T && u0 + kRows - 1 <= t_base;  // as dkdv's
      if (whole) {
        probabilities(s, dp, slse, sD, scale2, 0, [&](int row, int, int& qi) {
          qi = warp * 16 + row;
          return true;
        });
      } else {
        probabilities(s, dp, slse, sD, scale2, 0, [&](int row, int col, int& qi) {
          qi = warp * 16 + row;
          const index_t t = t_base + row, u = u0 + col;
          return t < a.T && u <= t;
        });
      }
      accumulate_times_tile(dq, dp, sk[buf]);  // dq += dS·k
    }
    __syncthreads();  // buffer buf is free for tile kt + 2
  }
  store(a, dq, b, h, 0, t_base, a.alpha);
}

}  // namespace

void launch_dkdv_dq(const Args<float>& a, const dim3 grid, cudaStream_t stream) {
  dkdv_kernel<<<grid, kThreads, 0, stream>>>(a);
  backends::check_cuda(cudaGetLastError(), "flash_mma fp32 dk/dv kernel launch");
  dq_kernel<<<grid, kThreads, 0, stream>>>(a);
  backends::check_cuda(cudaGetLastError(), "flash_mma fp32 dq kernel launch");
}

}  // namespace llmk::op::attention_backward_recompute::flash_mma
