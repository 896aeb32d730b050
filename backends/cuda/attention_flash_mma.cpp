// "flash_mma" for attention_backward_recompute (ops/attention_backward_recompute/
// flash_mma.hpp says what it computes): flash-attention's backward on bf16
// tensor cores, in two kernels after the rows' D (row_dots_kernel):
//   DkDv: a block of 64 keys of one (b, h) walks the query blocks at or after
//         it; per query tile, Sᵀ = k·qᵀ and dPᵀ = v·dout_hᵀ (warp w owns keys
//         16w..16w+15: the tile's rows), Pᵀ and dSᵀ from them in registers,
//         then dv += Pᵀ·dout_h and dk += dSᵀ·q with Pᵀ and dSᵀ as the A
//         operands straight from the accumulators (an m16n8 accumulator pair
//         is an m16k16 A fragment);
//   Dq:   a block of 64 queries walks the key blocks at or before it: S, dP,
//         dS the same way (warp w owns queries 16w..), dq += dS·k.
// Every sum runs over its tiles in a fixed order (no atomics): deterministic.
// Tiles live in shared memory at a row stride of 72 bf16 (144 bytes): the
// 32-bit fragment loads of 8 rows × 4 lanes and ldmatrix's 8 row addresses
// fall on distinct banks. B fragments come by ldmatrix, those that run along
// the tile's rows (dout_h and q for dv, dk; k for dq) by ldmatrix.trans. The
// streamed tiles are double buffered (cp.async). Steps measured on the H200
// (B 8, T 1024, bf16): 0.514 ms plain, 0.377 with cp.async and ex2.approx,
// 0.360 with half tiles, ldmatrix and 3 blocks an SM, 0.283 with the rows'
// D in a kernel of 8 lanes a row (was 55 us of the 0.360) and no per-element
// checks in the tiles without a masked pair (docs/performance.md).
#include <ops/attention_backward_recompute/flash_mma.hpp>

#include <backends/cuda/cuda_checks.hpp>
#include <kernels/attention_flash.hpp>
#include <llmk/bf16.hpp>

#include <cuda_runtime.h>

#include <cstdint>

namespace llmk::op::attention_backward_recompute {
namespace {

constexpr int kBlock = int(kFlashMmaBlock);  // positions a tile holds
constexpr int kHead = int(kFlashMmaMaxHead);  // a tile row's channels (zero padded)
constexpr int kStride = 72;                   // a shared row's bf16 (144 bytes)
constexpr int kThreads = 128;                 // 4 warps of 16 rows
constexpr float kLog2e = 1.4426950408889634f;

struct Args {
  bf16* dqkv;
  const bf16* dout;
  const bf16* qkv;
  const float* lse;
  const float* D;
  index_t T, C, NH;
  int HS;
  float alpha;
  bool overwrite;
  bool vector_loads;  // every row of q, k, v and dout 16-byte aligned, HS = 64
};

// 16 bytes global → shared without passing through registers (sm_80's
// cp.async): zeros where !valid (src-size 0; `src` is then not read).
__device__ __forceinline__ void cp_async16(void* dst, const void* src, bool valid) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const auto d = static_cast<std::uint32_t>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src),
               "r"(valid ? 16 : 0));
#else
  (void)dst, (void)src, (void)valid;
  __trap();
#endif
}
__device__ __forceinline__ void cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n");
#endif
}
// Waits until at most `pending` of this thread's committed groups are in flight.
template <int pending>
__device__ __forceinline__ void cp_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(pending));
#endif
}

// 2^x by the SFU (ex2.approx: relative error ≈ 2⁻²², NaN stays NaN, −∞ → 0).
__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// A tile: rows [row0, row0 + 64) of the (b, h) head found at `base` with row
// stride `ld` (elements), channels [0, HS), zeros past T and past HS. By
// cp.async where every row is 16-byte aligned and HS = 64 (it has landed
// after cp_async_wait), else by plain loads.
__device__ void load_tile(std::uint16_t (*tile)[kStride], const bf16* base, index_t ld, index_t row0,
                          index_t T, int HS, bool vector_loads) {
  if (vector_loads) {
    // 64 rows × 8 packs of 8 bf16, asynchronous: the caller commits and
    // waits (cp_async_commit, cp_async_wait) before a barrier.
    for (int i = threadIdx.x; i < kBlock * 8; i += kThreads) {
      const int r = i / 8, c = (i % 8) * 8;
      const index_t row = row0 + r;
      cp_async16(&tile[r][c], base + (row < T ? row : 0) * ld + c, row < T);
    }
  } else {
    for (int i = threadIdx.x; i < kBlock * kHead; i += kThreads) {
      const int r = i / kHead, c = i % kHead;
      const index_t row = row0 + r;
      tile[r][c] = row < T && c < HS ? base[row * ld + c].bits : std::uint16_t(0);
    }
  }
}

// Row i of a tile's per-row floats (lse·log₂e or D), 0 past T; loaded into a
// register first so that its latency hides behind the tile's products.
__device__ __forceinline__ float row_value(const float* src, index_t row0, int i, index_t T,
                                           float scale) {
  return row0 + i < T ? src[row0 + i] * scale : 0.f;
}

__device__ __forceinline__ std::uint32_t pack(float lo, float hi) {
  // lo in the low half: the lower k (or column) index of a fragment's pair.
  const std::uint32_t l = bf16(lo).bits, h = bf16(hi).bits;
  return l | (h << 16);
}

__device__ __forceinline__ std::uint32_t lds32(const std::uint16_t* p) {
  return *reinterpret_cast<const std::uint32_t*>(p);
}

// D (16×8, float) += A (16×16, bf16, row-major fragment) · B (16×8, bf16).
__device__ __forceinline__ void mma(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                    std::uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
  __trap();  // refused on the host before a launch (flash_mma_device_has_bf16_mma)
#endif
}

// B fragments of two n-tiles (columns n0..n0+15) for k rows k0..k0+15 of a
// tile stored [k][n] (rows along k): ldmatrix.trans of four 8×8 matrices.
// b[0], b[1] are n-tile n0's, b[2], b[3] n-tile n0 + 8's.
__device__ __forceinline__ void ldsm_trans(std::uint32_t (&b)[4], const std::uint16_t (*tile)[kStride],
                                           int k0, int n0) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const int lane = threadIdx.x % 32;
  const int row = k0 + (lane / 8 % 2) * 8 + lane % 8, col = n0 + lane / 16 * 8;
  const auto addr = static_cast<std::uint32_t>(__cvta_generic_to_shared(&tile[row][col]));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(b[0]), "=r"(b[1]), "=r"(b[2]), "=r"(b[3])
               : "r"(addr));
#else
  (void)b, (void)tile, (void)k0, (void)n0;
  __trap();
#endif
}

// B fragments of two n-tiles (n0..n0+15) for k-step k0..k0+15 of a tile
// stored [n][k] (rows along n, k contiguous): ldmatrix of four 8×8
// matrices, one instruction for what four 32-bit loads a tile would take.
// b[0], b[1] are n-tile n0's, b[2], b[3] n-tile n0 + 8's.
__device__ __forceinline__ void ldsm(std::uint32_t (&b)[4], const std::uint16_t (*tile)[kStride],
                                     int n0, int k0) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const int lane = threadIdx.x % 32, mi = lane / 8;
  const int row = n0 + (mi / 2) * 8 + lane % 8, col = k0 + (mi % 2) * 8;
  const auto addr = static_cast<std::uint32_t>(__cvta_generic_to_shared(&tile[row][col]));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(b[0]), "=r"(b[1]), "=r"(b[2]), "=r"(b[3])
               : "r"(addr));
#else
  (void)b, (void)tile, (void)n0, (void)k0;
  __trap();
#endif
}

// A fragments (16 rows × 64 channels, 4 k-steps) of rows r0..r0+15 of a tile.
__device__ __forceinline__ void load_a(std::uint32_t (&a)[4][4], const std::uint16_t (*tile)[kStride],
                                       int r0) {
  const int lane = threadIdx.x % 32, g = lane / 4, c = lane % 4;
  for (int ks = 0; ks < 4; ++ks) {
    a[ks][0] = lds32(&tile[r0 + g][ks * 16 + 2 * c]);
    a[ks][1] = lds32(&tile[r0 + g + 8][ks * 16 + 2 * c]);
    a[ks][2] = lds32(&tile[r0 + g][ks * 16 + 2 * c + 8]);
    a[ks][3] = lds32(&tile[r0 + g + 8][ks * 16 + 2 * c + 8]);
  }
}

// A tile's products run on half tiles of 32 positions (kHalf), which keeps
// a warp's score accumulators at 2 × 16 registers (dkdv: 254 registers a
// thread with whole tiles, 232 with halves, 168 under its launch bounds).
constexpr int kHalf = 32;

// acc[nt] (16 × 32: 4 n-tiles) = a (16 × 64) · tile[n0..n0+31]ᵀ, rows n0..
// of the tile as the columns: acc[r][n] = Σ_d a[r][d]·tile[n0 + n][d].
__device__ __forceinline__ void product_with_rows(float (&acc)[4][4],
                                                  const std::uint32_t (&a)[4][4],
                                                  const std::uint16_t (*tile)[kStride], int n0) {
  for (int nt = 0; nt < 4; ++nt)
    for (int j = 0; j < 4; ++j) acc[nt][j] = 0.f;
  for (int ks = 0; ks < 4; ++ks)
    for (int nt = 0; nt < 4; nt += 2) {
      std::uint32_t b[4];
      ldsm(b, tile, n0 + nt * 8, ks * 16);
      mma(acc[nt], a[ks], b[0], b[1]);
      mma(acc[nt + 1], a[ks], b[2], b[3]);
    }
}

// acc (16 × 64 channels) += x (16 × 32 positions, accumulator layout, as
// bf16) · tile rows k0..k0+31 (positions × 64 channels).
__device__ __forceinline__ void accumulate_times_tile(float (&acc)[8][4], const float (&x)[4][4],
                                                      const std::uint16_t (*tile)[kStride],
                                                      int k0) {
  for (int kk = 0; kk < 2; ++kk) {
    // Accumulator tiles 2kk and 2kk + 1 are the A fragment of k-step kk.
    const std::uint32_t a[4] = {pack(x[2 * kk][0], x[2 * kk][1]), pack(x[2 * kk][2], x[2 * kk][3]),
                                pack(x[2 * kk + 1][0], x[2 * kk + 1][1]),
                                pack(x[2 * kk + 1][2], x[2 * kk + 1][3])};
    for (int nd = 0; nd < 8; nd += 2) {
      std::uint32_t b[4];
      ldsm_trans(b, tile, k0 + kk * 16, nd * 8);
      mma(acc[nd], a, b[0], b[1]);
      mma(acc[nd + 1], a, b[2], b[3]);
    }
  }
}

// Rows r0..r0+15 of a 16 × 64 accumulator (channels), times `scale`, into
// dqkv's `part` (0 q, 1 k, 2 v) of head h, rows below T, channels below HS.
__device__ void store(const Args& a, const float (&acc)[8][4], index_t b, index_t h, int part,
                      index_t r0, float scale) {
  const int lane = threadIdx.x % 32, g = lane / 4, c = lane % 4;
  for (int half = 0; half < 2; ++half) {
    const index_t t = r0 + g + 8 * half;
    if (t >= a.T) continue;
    bf16* const row = a.dqkv + (b * a.T + t) * 3 * a.C + part * a.C + h * a.HS;
    for (int nt = 0; nt < 8; ++nt)
      for (int j = 0; j < 2; ++j) {
        const int d = nt * 8 + 2 * c + j;
        if (d >= a.HS) continue;
        const float v = acc[nt][2 * half + j] * scale;
        row[d] = bf16(a.overwrite ? v : float(row[d]) + v);
      }
  }
}

// The causal probabilities and their score gradients of one tile, in place:
// s holds the logits' dots, dp dout_h·v. Element (row, col) of a warp's
// 16 × 32 accumulators (columns col0..col0+31 of the tile) is the pair
// (query t, key u) that `pair` names;
// masked pairs (u > t) and positions past T are exact zeros. lse2 is the
// queries' lse·log₂e: P = 2^(α·log₂e·s − lse·log₂e).
template <class Pair>
__device__ __forceinline__ void probabilities(float (&s)[4][4], float (&dp)[4][4],
                                              const float* lse2, const float* D, float scale2,
                                              int col0, Pair pair) {
  const int lane = threadIdx.x % 32, g = lane / 4, c = lane % 4;
  for (int nt = 0; nt < 4; ++nt)
    for (int j = 0; j < 4; ++j) {
      const int row = g + 8 * (j / 2), col = col0 + nt * 8 + 2 * c + j % 2;
      int q;  // the query's index in its tile (lse, D)
      const bool valid = pair(row, col, q);
      const float p = valid ? exp2_approx(s[nt][j] * scale2 - lse2[q]) : 0.f;
      dp[nt][j] = valid ? p * (dp[nt][j] - D[q]) : 0.f;
      s[nt][j] = p;
    }
}

// Both kernels stream tiles through two shared buffers: while the products
// of tile i run on buffer i % 2, tile i + 1's rows are in flight into the
// other (cp.async), its per-row floats in registers.
using Tile = std::uint16_t[kBlock][kStride];

// 3 blocks an SM (≤ 168 registers, a few spilled): B 8, T 1024 0.360 ms
// against 0.376 at its natural 232 registers and 2 blocks (H200, call E3).
__global__ void __launch_bounds__(kThreads, 3) dkdv_kernel(const Args a) {
  __shared__ __align__(16) Tile sq[2], sdo[2];
  __shared__ float slse[2][kBlock], sD[2][kBlock];
  const index_t bh = blockIdx.x, b = bh / a.NH, h = bh % a.NH;
  const index_t kb = blockIdx.y;  // the heaviest (first) key blocks start first
  const index_t u0 = kb * kBlock;
  const int warp = threadIdx.x / 32, tid = threadIdx.x;
  const index_t ld = 3 * a.C;
  const bf16* const q = a.qkv + b * a.T * ld + h * a.HS;
  const bf16* const dout = a.dout + b * a.T * a.C + h * a.HS;
  const float* const lse = a.lse + bh * a.T;
  const float* const D = a.D + bh * a.T;

  // This warp's keys and values as A fragments, staged through buffer 1.
  std::uint32_t kf[4][4], vf[4][4];
  load_tile(sq[1], q + a.C, ld, u0, a.T, a.HS, a.vector_loads);
  load_tile(sdo[1], q + 2 * a.C, ld, u0, a.T, a.HS, a.vector_loads);
  cp_async_commit();
  // The first query tile (the diagonal one) into buffer 0.
  load_tile(sq[0], q, ld, u0, a.T, a.HS, a.vector_loads);
  load_tile(sdo[0], dout, a.C, u0, a.T, a.HS, a.vector_loads);
  cp_async_commit();
  if (tid < kBlock) {
    slse[0][tid] = row_value(lse, u0, tid, a.T, kLog2e);
    sD[0][tid] = row_value(D, u0, tid, a.T, 1.0f);
  }
  cp_async_wait<1>();
  __syncthreads();
  load_a(kf, sq[1], warp * 16);
  load_a(vf, sdo[1], warp * 16);
  __syncthreads();  // buffer 1 is free

  float dk[8][4] = {}, dv[8][4] = {};
  const float scale2 = a.alpha * kLog2e;
  const index_t blocks = (a.T + kBlock - 1) / kBlock;
  const index_t u_base = u0 + warp * 16;
  int buf = 0;
  for (index_t qb = kb; qb < blocks; ++qb, buf ^= 1) {
    const index_t t0 = qb * kBlock;
    const bool next = qb + 1 < blocks;
    float next_lse = 0.f, next_d = 0.f;
    if (next) {
      load_tile(sq[buf ^ 1], q, ld, t0 + kBlock, a.T, a.HS, a.vector_loads);
      load_tile(sdo[buf ^ 1], dout, a.C, t0 + kBlock, a.T, a.HS, a.vector_loads);
      if (tid < kBlock) {
        next_lse = row_value(lse, t0 + kBlock, tid, a.T, kLog2e);
        next_d = row_value(D, t0 + kBlock, tid, a.T, 1.0f);
      }
    }
    cp_async_commit();
    cp_async_wait<1>();  // this tile's group has landed
    __syncthreads();
    for (int half = 0; half < kBlock; half += kHalf) {
      // Queries t0 + half .. + 31 all before this warp's keys: all masked.
      if (t0 + half + kHalf - 1 < u_base) continue;
      float s[4][4], dp[4][4];
      product_with_rows(s, kf, sq[buf], half);    // Sᵀ: rows keys, columns queries
      product_with_rows(dp, vf, sdo[buf], half);  // dPᵀ
      // Every pair causal and below T (all but the diagonal's and the last
      // tile's): no per-element checks.
      const bool whole = t0 + half + kHalf <= a.T && u_base + 15 <= t0 + half;
      if (whole) {
        probabilities(s, dp, slse[buf], sD[buf], scale2, half, [](int, int col, int& qi) {
          qi = col;
          return true;
        });
      } else {
        probabilities(s, dp, slse[buf], sD[buf], scale2, half, [&](int row, int col, int& qi) {
          qi = col;
          const index_t u = u_base + row, t = t0 + col;
          return t < a.T && u <= t;
        });
      }
      accumulate_times_tile(dv, s, sdo[buf], half);  // dv += Pᵀ·dout_h
      accumulate_times_tile(dk, dp, sq[buf], half);  // dk += dSᵀ·q
    }
    __syncthreads();  // buffer buf is free for tile qb + 2
    if (next && tid < kBlock) slse[buf ^ 1][tid] = next_lse, sD[buf ^ 1][tid] = next_d;
  }
  store(a, dk, b, h, 1, u_base, a.alpha);
  store(a, dv, b, h, 2, u_base, 1.0f);
}

__global__ void __launch_bounds__(kThreads) dq_kernel(const Args a) {
  __shared__ __align__(16) Tile sk[2], sv[2];
  __shared__ float slse[kBlock], sD[kBlock];
  const index_t bh = blockIdx.x, b = bh / a.NH, h = bh % a.NH;
  const index_t blocks = (a.T + kBlock - 1) / kBlock;
  const index_t qb = blocks - 1 - index_t(blockIdx.y);  // the heaviest first
  const index_t t0 = qb * kBlock;
  const int warp = threadIdx.x / 32, tid = threadIdx.x;
  const index_t ld = 3 * a.C;
  const bf16* const q = a.qkv + b * a.T * ld + h * a.HS;
  const bf16* const dout = a.dout + b * a.T * a.C + h * a.HS;

  // This warp's queries and dout_h rows as A fragments, staged through
  // buffer 1; the first key tile into buffer 0.
  std::uint32_t qf[4][4], dof[4][4];
  load_tile(sk[1], q, ld, t0, a.T, a.HS, a.vector_loads);
  load_tile(sv[1], dout, a.C, t0, a.T, a.HS, a.vector_loads);
  cp_async_commit();
  load_tile(sk[0], q + a.C, ld, 0, a.T, a.HS, a.vector_loads);
  load_tile(sv[0], q + 2 * a.C, ld, 0, a.T, a.HS, a.vector_loads);
  cp_async_commit();
  if (tid < kBlock) {
    slse[tid] = row_value(a.lse + bh * a.T, t0, tid, a.T, kLog2e);
    sD[tid] = row_value(a.D + bh * a.T, t0, tid, a.T, 1.0f);
  }
  cp_async_wait<1>();
  __syncthreads();
  load_a(qf, sk[1], warp * 16);
  load_a(dof, sv[1], warp * 16);
  __syncthreads();  // buffer 1 is free

  float dq[8][4] = {};
  const float scale2 = a.alpha * kLog2e;
  const index_t t_base = t0 + warp * 16;
  int buf = 0;
  for (index_t kb = 0; kb <= qb; ++kb, buf ^= 1) {
    const index_t u0 = kb * kBlock;
    if (kb < qb) {
      load_tile(sk[buf ^ 1], q + a.C, ld, u0 + kBlock, a.T, a.HS, a.vector_loads);
      load_tile(sv[buf ^ 1], q + 2 * a.C, ld, u0 + kBlock, a.T, a.HS, a.vector_loads);
    }
    cp_async_commit();
    cp_async_wait<1>();
    __syncthreads();
    for (int half = 0; half < kBlock; half += kHalf) {
      // Keys u0 + half .. all after this warp's queries: all masked.
      if (u0 + half > t_base + 15) continue;
      float s[4][4], dp[4][4];
      product_with_rows(s, qf, sk[buf], half);    // S: rows queries, columns keys
      product_with_rows(dp, dof, sv[buf], half);  // dP
      const bool whole = t_base + 16 <= a.T && u0 + half + kHalf - 1 <= t_base;  // as dkdv's
      if (whole) {
        probabilities(s, dp, slse, sD, scale2, half, [&](int row, int, int& qi) {
          qi = warp * 16 + row;
          return true;
        });
      } else {
        probabilities(s, dp, slse, sD, scale2, half, [&](int row, int col, int& qi) {
          qi = warp * 16 + row;
          const index_t t = t_base + row, u = u0 + col;
          return t < a.T && u <= t;
        });
      }
      accumulate_times_tile(dq, dp, sk[buf], half);  // dq += dS·k
    }
    __syncthreads();  // buffer buf is free for tile kb + 2
  }
  store(a, dq, b, h, 0, t_base, a.alpha);
}

// D[(b·NH + h)·T + t] = dout_h[t] · out_h[t] for heads of 64 channels with
// 16-byte rows: 8 lanes a row, one 16-byte load of each operand a lane, the
// lanes' 8-term sums added by shuffles in a fixed tree (deterministic). A
// warp reads 4 whole rows, 512 contiguous bytes of each operand; the
// portable kernel's thread per row (kernels::attention_flash_row_dots)
// reads 2 bytes a lane from 32 rows C apart per load: 55 us of the 0.360 ms
// at B 8, T 1024 on the H200 (ncu, call S3), where the bytes need ~7 us.
__global__ void row_dots_kernel(float* const D, const bf16* const dout, const bf16* const out,
                                const index_t rows, const index_t T, const index_t NH) {
  // A grid-stride loop over 8 lanes a row, the lanes' count rounded up to
  // whole warps so that every lane of a warp takes every step (shuffles).
  const index_t lanes = (rows * 8 + 31) / 32 * 32;
  const index_t stride = index_t(gridDim.x) * blockDim.x;
  for (index_t i = index_t(blockIdx.x) * blockDim.x + threadIdx.x; i < lanes; i += stride) {
    const index_t row = i / 8;  // (b·T + t)·NH + h: rows in memory order
    const int lane8 = int(i % 8);
    float s = 0.f;
    if (row < rows) {
      const index_t at = row * kHead + lane8 * 8;
      const uint4 x = *reinterpret_cast<const uint4*>(dout + at);
      const uint4 y = *reinterpret_cast<const uint4*>(out + at);
      const std::uint32_t xw[4] = {x.x, x.y, x.z, x.w}, yw[4] = {y.x, y.y, y.z, y.w};
      for (int w = 0; w < 4; ++w) {  // bf16 → float: the bits in the high half
        s += __uint_as_float(xw[w] << 16) * __uint_as_float(yw[w] << 16);
        s += __uint_as_float(xw[w] & 0xffff0000u) * __uint_as_float(yw[w] & 0xffff0000u);
      }
    }
    for (int o = 4; o > 0; o /= 2) s += __shfl_xor_sync(0xffffffffu, s, o);
    if (row < rows && lane8 == 0) {
      const index_t h = row % NH, bt = row / NH, t = bt % T, b = bt / T;
      D[(b * NH + h) * T + t] = s;
    }
  }
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

}  // namespace

bool flash_mma_device_has_bf16_mma() {
  int major = 0;
  const int device = Kokkos::Cuda().cuda_device();
  backends::check_cuda(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
                       "cudaDeviceGetAttribute");
  return major >= 8;
}

template <class ExecSpace, class P>
void flash_mma_run(const ExecSpace& exec, const Problem<ExecSpace, P>& p, float* const D) {
  const auto& f = p.args;
  const index_t blocks = (f.T + kBlock - 1) / kBlock;  // within FlashMma::grid_fits
  Args a;
  a.dqkv = f.dqkv, a.dout = f.dout, a.qkv = f.qkv, a.lse = f.lse, a.D = D;
  a.T = f.T, a.C = f.C, a.NH = f.NH, a.HS = int(f.HS());
  a.alpha = f.alpha, a.overwrite = f.overwrite;
  // 16-byte rows: every head's first element and every row stride.
  a.vector_loads = a.HS == kHead && aligned16(f.qkv) && aligned16(f.dout) && f.C % 8 == 0;
  const dim3 grid(unsigned(f.B * f.NH), unsigned(blocks));
  cudaStream_t stream = exec.cuda_stream();
  backends::DeviceScope device(exec.cuda_device());
  if (a.vector_loads && aligned16(f.out)) {
    const index_t rows = f.B * f.T * f.NH, threads = 256;
    const index_t needed = (rows * 8 + threads - 1) / threads;
    const index_t grid_x = needed < (index_t(1) << 20) ? needed : (index_t(1) << 20);
    row_dots_kernel<<<unsigned(grid_x), unsigned(threads), 0, stream>>>(D, f.dout, f.out, rows,
                                                                         f.T, f.NH);
    backends::check_cuda(cudaGetLastError(), "flash_mma row dots kernel launch");
  } else {
    kernels::attention_flash_row_dots(exec, f, D);
  }
  dkdv_kernel<<<grid, kThreads, 0, stream>>>(a);
  backends::check_cuda(cudaGetLastError(), "flash_mma dk/dv kernel launch");
  dq_kernel<<<grid, kThreads, 0, stream>>>(a);
  backends::check_cuda(cudaGetLastError(), "flash_mma dq kernel launch");
}

template void flash_mma_run<Kokkos::Cuda, Bf16>(const Kokkos::Cuda&,
                                                const Problem<Kokkos::Cuda, Bf16>&, float*);

}  // namespace llmk::op::attention_backward_recompute
