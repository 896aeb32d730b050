// The bf16 tiles of the "flash_mma" kernels, shared by the recompute
// backward's (attention_flash_mma.cpp) and the forward's
// (attention_forward_flash_mma.cpp): a tile of 64 positions × 64 channels
// in shared memory, its loads (cp.async), the m16n8k16 mma and its fragment
// loads (ldmatrix), and the two products every kernel is made of:
// product_with_rows (scores: rows × a tile's rows) and accumulate_times_tile
// (a warp's 16 × 32 weights times 32 of a tile's rows, into 16 × 64 float
// accumulators). CUDA only.
#pragma once

#include <backends/cuda/attention_flash_mma.hpp>
#include <backends/cuda/ptx.hpp>
#include <llmk/bf16.hpp>
#include <llmk/types.hpp>

#include <cuda_runtime.h>

#include <cstdint>

namespace llmk::op::attention_backward_recompute::flash_mma {

constexpr int kStride = 72;  // a shared row's bf16 (144 bytes)

// A tile: rows [row0, row0 + 64) of the (b, h) head found at `base` with row
// stride `ld` (elements), channels [0, HS), zeros past T and past HS. By
// cp.async where every row is 16-byte aligned and HS = 64 (it has landed
// after wait_group), else by plain loads.
__device__ inline void load_tile(std::uint16_t (*tile)[kStride], const bf16* base, index_t ld, index_t row0,
                          index_t T, int HS, bool vector_loads) {
  if (vector_loads) {
    // 64 rows × 8 packs of 8 bf16, asynchronous: the caller commits and
    // waits (commit_group, wait_group) before a barrier.
    for (int i = threadIdx.x; i < kBlock * 8; i += kThreads) {
      const int r = i / 8, c = (i % 8) * 8;
      const index_t row = row0 + r;
      backends::ptx::cp_async16(&tile[r][c], base + (row < T ? row : 0) * ld + c, row < T);
    }
  } else {
    for (int i = threadIdx.x; i < kBlock * kHead; i += kThreads) {
      const int r = i / kHead, c = i % kHead;
      const index_t row = row0 + r;
      tile[r][c] = row < T && c < HS ? base[row * ld + c].bits : std::uint16_t(0);
    }
  }
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
  __trap();  // refused on the host before a launch (flash_mma_device_has_mma)
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
// bf16) · tile rows k0..k0+31 (positions × 64 channels). kStore: x is this
// warp's rows of a tile's dSᵀ, and its bf16 pairs (the A fragments) also go
// to flash_mma_ds's blocked tile (ds_words: a warp's store a whole block).
template <bool kStore = false>
__device__ __forceinline__ void accumulate_times_tile(float (&acc)[8][4], const float (&x)[4][4],
                                                      const std::uint16_t (*tile)[kStride],
                                                      int k0, std::uint32_t* words = nullptr) {
  for (int kk = 0; kk < 2; ++kk) {
    // Accumulator tiles 2kk and 2kk + 1 are the A fragment of k-step kk.
    const std::uint32_t a[4] = {pack(x[2 * kk][0], x[2 * kk][1]), pack(x[2 * kk][2], x[2 * kk][3]),
                                pack(x[2 * kk + 1][0], x[2 * kk + 1][1]),
                                pack(x[2 * kk + 1][2], x[2 * kk + 1][3])};
    if constexpr (kStore) {
      // a[i]: rows g + 8·(i % 2), columns k0 + (2kk + i/2)·8 + 2c, +1: of
      // block (2·warp + i % 2, k0/8 + 2kk + i/2), the word lane = 4g + c.
      for (int i = 0; i < 4; ++i) words[((i % 2) * 8 + k0 / 8 + 2 * kk + i / 2) * 32] = a[i];
    }
    for (int nd = 0; nd < 8; nd += 2) {
      std::uint32_t b[4];
      ldsm_trans(b, tile, k0 + kk * 16, nd * 8);
      mma(acc[nd], a, b[0], b[1]);
      mma(acc[nd + 1], a, b[2], b[3]);
    }
  }
}

// Both kernels stream tiles through two shared buffers: while the products
// of tile i run on buffer i % 2, tile i + 1's rows are in flight into the
// other (cp.async), its per-row floats in registers.
using Tile = std::uint16_t[kBlock][kStride];

}  // namespace llmk::op::attention_backward_recompute::flash_mma
