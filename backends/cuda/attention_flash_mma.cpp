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
//         dS the same way (warp w owns queries 16w..), dq += dS·k;
//         "flash_mma_ds": DkDv also writes each tile's bf16 dSᵀ to the
//         workspace, and a block of 8 warps (two query blocks) reads them
//         back for dq += dS·k alone (dq_ds_kernel).
// Every sum runs over its tiles in a fixed order (no atomics): deterministic.
// Tiles live in shared memory at a row stride of 72 bf16 (144 bytes): the
// 32-bit fragment loads of 8 rows × 4 lanes and ldmatrix's 8 row addresses
// fall on distinct banks. B fragments come by ldmatrix, those that run along
// the tile's rows (dout_h and q for dv, dk; k for dq) by ldmatrix.trans. The
// streamed tiles are double buffered (cp.async). Steps measured on the H200
// (B 8, T 1024, bf16): 0.514 ms plain, 0.377 with cp.async and ex2.approx,
// 0.360 with half tiles, ldmatrix and 3 blocks an SM, 0.283 with the rows'
// D in a kernel of 8 lanes a row (was 55 us of the 0.360) and no per-element
// checks in the tiles without a masked pair; flash_mma_ds 0.264 (dq 67 us
// by ncu where flash_mma's dq kernel takes 110; docs/performance.md).
#include <ops/attention_backward_recompute/flash_mma.hpp>

#include <backends/cuda/attention_flash_mma.hpp>
#include <backends/cuda/attention_flash_mma_tiles.hpp>
#include <backends/cuda/cuda_checks.hpp>
#include <kernels/attention_flash.hpp>
#include <llmk/bf16.hpp>

#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <type_traits>

namespace llmk::op::attention_backward_recompute {
namespace {

using namespace flash_mma;  // kBlock, kHead, kThreads, kLog2e, Args, row_value, ...
static_assert(kBlock == kFlashMmaBlock && kHead == kFlashMmaMaxHead, "flash_mma.hpp's tiles");
using backends::ptx::commit_group;
using backends::ptx::cp_async16;
using backends::ptx::wait_group;


// flash_mma_ds's tiles. A tile of 64 × 64 bf16 is stored as 8 × 8 blocks
// of 8 × 8, each block's 8 rows of 16 bytes contiguous (128 bytes), block
// (i, j) (rows 8i.., columns 8j..) the (8i + j)-th: a warp's 32-bit stores
// of an accumulator n-tile fill one block (one 128-byte line), and the 8 row
// addresses ldmatrix takes for a block are 128 contiguous bytes (all 32
// banks) with no padding.
__device__ __forceinline__ int blocked(int row, int col) {
  return ((row / 8) * 8 + col / 8) * 64 + (row % 8) * 8 + col % 8;
}

// The tile of dSᵀ (rows keys of block kb, columns queries of block qb,
// kb ≤ qb) of head bh, blocked: a head's causal tiles one after the other
// by query block (tile qb·(qb + 1)/2 + kb), so a dq block's are contiguous.
__device__ __forceinline__ bf16* ds_tile(const Args<bf16>& a, index_t bh, index_t qb, index_t kb) {
  const index_t blocks = (a.T + kBlock - 1) / kBlock;
  const index_t tile = bh * (blocks * (blocks + 1) / 2) + qb * (qb + 1) / 2 + kb;
  return a.ds + tile * kBlock * kBlock;
}

// Zeros for this warp's 16 rows (keys) of a tile's dSᵀ, queries
// col0..col0+31, where it skips a half tile wholly masked (ds_words as
// accumulate_times_tile takes them).
__device__ __forceinline__ void store_ds_zeros(std::uint32_t* ds_words, int col0) {
  for (int i = 0; i < 8; ++i) ds_words[((i % 2) * 8 + col0 / 8 + i / 2) * 32] = 0;
}

// A blocked tile in shared memory (8 KB).
using BlockedTile = std::uint16_t[kBlock * kBlock];

// Four 8 × 8 blocks of a blocked tile by ldmatrix.trans: lane l names row
// l % 8 of block (r0/8 + dr, c0/8 + dc), (dr, dc) = order(l / 8). Each lane
// gets, of each block, the pair (rows 2c, 2c + 1; column g).
template <class Order>
__device__ __forceinline__ void ldsm_trans_blocked(std::uint32_t (&x)[4], const BlockedTile& tile,
                                                   int r0, int c0, Order order) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const int lane = threadIdx.x % 32;
  int dr, dc;
  order(lane / 8, dr, dc);
  const int at = ((r0 / 8 + dr) * 8 + c0 / 8 + dc) * 64 + (lane % 8) * 8;
  const auto addr = static_cast<std::uint32_t>(__cvta_generic_to_shared(&tile[at]));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(x[0]), "=r"(x[1]), "=r"(x[2]), "=r"(x[3])
               : "r"(addr));
#else
  (void)x, (void)tile, (void)r0, (void)c0, (void)order;
  __trap();
#endif
}

// dS's A fragment (queries m0..m0+15, keys k0..k0+15) from dSᵀ's blocked
// tile (rows keys): blocks in the fragment's order (query, key) = (lo, lo),
// (hi, lo), (lo, hi), (hi, hi).
__device__ __forceinline__ void ds_fragment(std::uint32_t (&a)[4], const BlockedTile& tile, int k0,
                                            int m0) {
  ldsm_trans_blocked(a, tile, k0, m0, [](int m, int& dr, int& dc) { dr = m / 2, dc = m % 2; });
}

// k's B fragments of two n-tiles (channels n0..n0+15) for keys k0..k0+15
// from its blocked tile (rows keys): b[0], b[1] n-tile n0's, b[2], b[3]
// n-tile n0 + 8's, as ldsm_trans gives them from a padded tile.
__device__ __forceinline__ void k_fragments(std::uint32_t (&b)[4], const BlockedTile& tile, int k0,
                                            int n0) {
  ldsm_trans_blocked(b, tile, k0, n0, [](int m, int& dr, int& dc) { dr = m % 2, dc = m / 2; });
}

// Rows [row0, row0 + 64) of a (b, h) head (stride ld, channels [0, HS),
// zeros past T and HS) into a blocked tile: by cp.async where vector_loads
// (the caller commits and waits), else by plain loads.
__device__ void load_blocked(BlockedTile& tile, const bf16* base, index_t ld, index_t row0,
                             index_t T, int HS, bool vector_loads) {
  const int threads = int(blockDim.x);
  if (vector_loads) {
    for (int i = threadIdx.x; i < kBlock * 8; i += threads) {
      const int r = i / 8, c = (i % 8) * 8;
      const index_t row = row0 + r;
      cp_async16(&tile[blocked(r, c)], base + (row < T ? row : 0) * ld + c, row < T);
    }
  } else {
    for (int i = threadIdx.x; i < kBlock * kHead; i += threads) {
      const int r = i / kHead, c = i % kHead;
      const index_t row = row0 + r;
      tile[blocked(r, c)] = row < T && c < HS ? base[row * ld + c].bits : std::uint16_t(0);
    }
  }
}

// 3 blocks an SM (≤ 168 registers, a few spilled): B 8, T 1024 0.360 ms
// against 0.376 at its natural 232 registers and 2 blocks (H200, call E3).
// kStoreDs: also write each tile's dSᵀ (flash_mma_ds), zeros where a warp
// skips a half tile wholly masked, so that every tile is written whole
// (+18 us at GPT-2's shape, 179 against 161; with 2 blocks an SM, 184).
template <bool kStoreDs>
__global__ void __launch_bounds__(kThreads, 3) dkdv_kernel(const Args<bf16> a) {
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
  commit_group();
  // The first query tile (the diagonal one) into buffer 0.
  load_tile(sq[0], q, ld, u0, a.T, a.HS, a.vector_loads);
  load_tile(sdo[0], dout, a.C, u0, a.T, a.HS, a.vector_loads);
  commit_group();
  if (tid < kBlock) {
    slse[0][tid] = row_value(lse, u0, tid, a.T, kLog2e);
    sD[0][tid] = row_value(D, u0, tid, a.T, 1.0f);
  }
  wait_group<1>();
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
    commit_group();
    wait_group<1>();  // this tile's group has landed
    __syncthreads();
    // This warp's words of the tile's dSᵀ (ds_words): its two rows of blocks, its lane's word.
    std::uint32_t* ds_words = nullptr;
    if constexpr (kStoreDs) {
      ds_words = reinterpret_cast<std::uint32_t*>(ds_tile(a, bh, qb, kb)) + warp * 2 * 8 * 32 +
                 tid % 32;
    }
    for (int half = 0; half < kBlock; half += kHalf) {
      // Queries t0 + half .. + 31 all before this warp's keys: all masked.
      if (t0 + half + kHalf - 1 < u_base) {
        if constexpr (kStoreDs) store_ds_zeros(ds_words, half);
        continue;
      }
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
      if constexpr (kStoreDs) {  // dk += dSᵀ·q, dSᵀ kept
        accumulate_times_tile<true>(dk, dp, sq[buf], half, ds_words);
      } else {
        accumulate_times_tile(dk, dp, sq[buf], half);  // dk += dSᵀ·q
      }
    }
    __syncthreads();  // buffer buf is free for tile qb + 2
    if (next && tid < kBlock) slse[buf ^ 1][tid] = next_lse, sD[buf ^ 1][tid] = next_d;
  }
  store(a, dk, b, h, 1, u_base, a.alpha);
  store(a, dv, b, h, 2, u_base, 1.0f);
}

__global__ void __launch_bounds__(kThreads) dq_kernel(const Args<bf16> a) {
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
  commit_group();
  load_tile(sk[0], q + a.C, ld, 0, a.T, a.HS, a.vector_loads);
  load_tile(sv[0], q + 2 * a.C, ld, 0, a.T, a.HS, a.vector_loads);
  commit_group();
  if (tid < kBlock) {
    slse[tid] = row_value(a.lse + bh * a.T, t0, tid, a.T, kLog2e);
    sD[tid] = row_value(a.D + bh * a.T, t0, tid, a.T, 1.0f);
  }
  wait_group<1>();
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
    commit_group();
    wait_group<1>();
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

// flash_mma_ds's dq: a block of 8 warps takes two query blocks of one
// (b, h), 2p (warps 0-3) and 2p + 1 (warps 4-7), and walks the key blocks at
// or before them, streaming each key tile (once for both: its reads from L2
// halved, the kernel's bound with a block a query block, 77 us at GPT-2's
// shape, L2 83 % busy) and the two tiles of dSᵀ (as the dk/dv kernel wrote
// them), all blocked, through three stages (two in flight while one is
// used). dq += dS·k, 16 keys a step in flash_mma's order. In a diagonal tile
// warp w of its group stops after its own 16 keys: the later ones are
// masked for its queries (zeros in the tile).
constexpr int kDqThreads = 256;
constexpr int kDqStages = 3;
struct DqStage {
  BlockedTile ds[2], k;  // 24 KB
};
constexpr std::size_t kDqSharedBytes = kDqStages * sizeof(DqStage);  // 72 KB: dynamic

__global__ void __launch_bounds__(kDqThreads, 2) dq_ds_kernel(const Args<bf16> a) {
  extern __shared__ __align__(16) unsigned char dq_shared[];
  DqStage* const stages = reinterpret_cast<DqStage*>(dq_shared);
  const index_t bh = blockIdx.x, b = bh / a.NH, h = bh % a.NH;
  const index_t blocks = (a.T + kBlock - 1) / kBlock, pairs = (blocks + 1) / 2;
  const index_t q0 = 2 * (pairs - 1 - index_t(blockIdx.y));  // the heaviest first
  const index_t q_last = q0 + 1 < blocks ? q0 + 1 : q0;      // an odd count's last pair: one
  const int warp = threadIdx.x / 32, group = warp / 4, w = warp % 4;
  const index_t qb = q0 + group;  // this warp's query block (past the last: idle)
  const index_t ld = 3 * a.C;
  const bf16* const k = a.qkv + b * a.T * ld + h * a.HS + a.C;
  // Key tile kb and the groups' dSᵀ tiles into stage kb % 3 (one commit
  // group, empty past q_last).
  const auto load = [&](index_t kb) {
    if (kb <= q_last) {
      DqStage& st = stages[kb % kDqStages];
      for (int g = 0; g < 2; ++g) {
        const index_t tile_qb = q0 + g;
        if (tile_qb > q_last || kb > tile_qb) continue;
        const bf16* const ds = ds_tile(a, bh, tile_qb, kb);
        for (int i = threadIdx.x; i < kBlock * 8; i += kDqThreads)
          cp_async16(&st.ds[g][i * 8], ds + i * 8, true);  // blocked already
      }
      load_blocked(st.k, k, ld, kb * kBlock, a.T, a.HS, a.vector_loads);
    }
    commit_group();
  };
  load(0);
  load(1);

  float dq[8][4] = {};
  for (index_t kb = 0; kb <= q_last; ++kb) {
    wait_group<1>();  // tile kb has landed (kb + 1 may be in flight)
    __syncthreads();  // ... for every thread; tile kb − 1's stage is free
    load(kb + 2);
    const DqStage& st = stages[kb % kDqStages];
    const int steps = qb > q_last || kb > qb ? 0 : kb == qb ? w + 1 : kBlock / 16;
    for (int ks = 0; ks < steps; ++ks) {
      std::uint32_t ds[4];
      ds_fragment(ds, st.ds[group], ks * 16, w * 16);
      for (int nd = 0; nd < 8; nd += 2) {
        std::uint32_t kfrag[4];
        k_fragments(kfrag, st.k, ks * 16, nd * 8);
        mma(dq[nd], ds, kfrag[0], kfrag[1]);
        mma(dq[nd + 1], ds, kfrag[2], kfrag[3]);
      }
    }
  }
  if (qb <= q_last) store(a, dq, b, h, 0, qb * kBlock + w * 16, a.alpha);
}

// Σ of the 8 products x[i]·y[i] (both 16-byte aligned), in order: one
// 16-byte load of each operand in bf16, two in float.
__device__ __forceinline__ float dot8(const bf16* x, const bf16* y) {
  const uint4 xv = *reinterpret_cast<const uint4*>(x), yv = *reinterpret_cast<const uint4*>(y);
  const std::uint32_t xw[4] = {xv.x, xv.y, xv.z, xv.w}, yw[4] = {yv.x, yv.y, yv.z, yv.w};
  float s = 0.f;
  for (int w = 0; w < 4; ++w) {  // bf16 → float: the bits in the high half
    s += __uint_as_float(xw[w] << 16) * __uint_as_float(yw[w] << 16);
    s += __uint_as_float(xw[w] & 0xffff0000u) * __uint_as_float(yw[w] & 0xffff0000u);
  }
  return s;
}
__device__ __forceinline__ float dot8(const float* x, const float* y) {
  float s = 0.f;
  for (int half = 0; half < 2; ++half) {
    const float4 xv = reinterpret_cast<const float4*>(x)[half];
    const float4 yv = reinterpret_cast<const float4*>(y)[half];
    s += xv.x * yv.x;
    s += xv.y * yv.y;
    s += xv.z * yv.z;
    s += xv.w * yv.w;
  }
  return s;
}

// D[(b·NH + h)·T + t] = dout_h[t] · out_h[t] for heads of 64 channels with
// 16-byte rows: 8 lanes a row, 8 elements a lane (one 16-byte load of each
// operand in bf16, two in float), the lanes' sums added by shuffles in a
// fixed tree (deterministic). A warp reads 4 whole rows, contiguous bytes of
// each operand; the portable kernel's thread per row
// (kernels::attention_flash_row_dots) reads 2 bytes a lane from 32 rows C
// apart per load: 55 us of the 0.360 ms at B 8, T 1024, bf16 on the H200
// (ncu, call S3), where the bytes need ~7 us.
template <class E>
__global__ void row_dots_kernel(float* const D, const E* const dout, const E* const out,
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
      s = dot8(dout + at, out + at);
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

namespace flash_mma {
void launch_dkdv_dq(const Args<bf16>& a, const dim3 grid, cudaStream_t stream) {
  if (a.ds) {
    backends::check_cuda(cudaFuncSetAttribute(dq_ds_kernel,
                                              cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              int(kDqSharedBytes)),
                         "flash_mma_ds: cudaFuncSetAttribute (dq's shared memory)");
    dkdv_kernel<true><<<grid, kThreads, 0, stream>>>(a);
    backends::check_cuda(cudaGetLastError(), "flash_mma_ds dk/dv kernel launch");
    const dim3 dq_grid(grid.x, (grid.y + 1) / 2);  // query blocks in pairs
    dq_ds_kernel<<<dq_grid, kDqThreads, kDqSharedBytes, stream>>>(a);
    backends::check_cuda(cudaGetLastError(), "flash_mma_ds dq kernel launch");
    return;
  }
  dkdv_kernel<false><<<grid, kThreads, 0, stream>>>(a);
  backends::check_cuda(cudaGetLastError(), "flash_mma dk/dv kernel launch");
  dq_kernel<<<grid, kThreads, 0, stream>>>(a);
  backends::check_cuda(cudaGetLastError(), "flash_mma dq kernel launch");
}
}  // namespace flash_mma

bool flash_mma_device_has_mma() {
  int major = 0;
  const int device = Kokkos::Cuda().cuda_device();
  backends::check_cuda(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
                       "cudaDeviceGetAttribute");
  return major >= 8;
}

template <class ExecSpace, class P>
void flash_mma_run(const ExecSpace& exec, const Problem<ExecSpace, P>& p, float* const D,
                   bf16* const ds) {
  using E = typename P::in;
  static_assert(std::is_same_v<E, typename P::dqkv>, "flash_mma: dqkv of the inputs' type");
  const auto& f = p.args;
  const index_t blocks = (f.T + kBlock - 1) / kBlock;  // within FlashMma::grid_fits
  Args<E> a;
  a.dqkv = f.dqkv, a.dout = f.dout, a.qkv = f.qkv, a.lse = f.lse, a.D = D;
  a.T = f.T, a.C = f.C, a.NH = f.NH, a.HS = int(f.HS());
  a.alpha = f.alpha, a.overwrite = f.overwrite;
  if (ds && !std::is_same_v<E, bf16>) throw std::logic_error("flash_mma_ds: bf16 only");
  a.ds = ds;
  // 16-byte rows: every head's first element and every row stride.
  constexpr index_t kPerPack = index_t(16 / sizeof(E));
  a.vector_loads = a.HS == kHead && aligned16(f.qkv) && aligned16(f.dout) && f.C % kPerPack == 0;
  const dim3 grid(unsigned(f.B * f.NH), unsigned(blocks));
  cudaStream_t stream = exec.cuda_stream();
  backends::DeviceScope device(exec.cuda_device());
  if (a.vector_loads && aligned16(f.out)) {
    const index_t rows = f.B * f.T * f.NH, threads = 256;
    const index_t needed = (rows * 8 + threads - 1) / threads;
    const index_t grid_x = needed < (index_t(1) << 20) ? needed : (index_t(1) << 20);
    row_dots_kernel<E><<<unsigned(grid_x), unsigned(threads), 0, stream>>>(D, f.dout, f.out, rows,
                                                                            f.T, f.NH);
    backends::check_cuda(cudaGetLastError(), "flash_mma row dots kernel launch");
  } else {
    kernels::attention_flash_row_dots(exec, f, D);
  }
  launch_dkdv_dq(a, grid, stream);
}

template void flash_mma_run<Kokkos::Cuda, Bf16>(const Kokkos::Cuda&,
                                                const Problem<Kokkos::Cuda, Bf16>&, float*,
                                                bf16*);
template void flash_mma_run<Kokkos::Cuda, Fp32>(const Kokkos::Cuda&,
                                                const Problem<Kokkos::Cuda, Fp32>&, float*,
                                                bf16*);

}  // namespace llmk::op::attention_backward_recompute
