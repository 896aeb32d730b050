// What the two families of "flash_mma" kernels share (bf16 operands on
// m16n8k16 in attention_flash_mma.cpp, float operands as three TF32
// products on m16n8k8 in attention_flash_mma_fp32.cpp): their arguments,
// the block of 64 positions in 4 warps of 16 rows, the accumulators' layout
// (m16n8, float: lane (g, c) = (lane / 4, lane % 4) holds rows g and g + 8,
// columns 2c and 2c + 1 of each 8-column n-tile), the probabilities computed
// on it, and the store of a warp's 16 × 64 result.
#pragma once

#include <backends/cuda/ptx.hpp>
#include <llmk/bf16.hpp>
#include <llmk/types.hpp>

#include <cuda_runtime.h>

namespace llmk::op::attention_backward_recompute::flash_mma {

constexpr int kBlock = 64;     // positions a block holds (kFlashMmaBlock)
constexpr int kHead = 64;      // a tile row's channels, zero padded (kFlashMmaMaxHead)
constexpr int kThreads = 128;  // 4 warps of 16 rows
constexpr float kLog2e = 1.4426950408889634f;

// E: the element type of dqkv, dout and qkv (bf16 or float).
template <class E>
struct Args {
  E* dqkv;
  const E* dout;
  const E* qkv;
  const float* lse;
  const float* D;
  index_t T, C, NH;
  int HS;
  float alpha;
  bool overwrite;
  bool vector_loads;  // every row of q, k, v and dout 16-byte aligned, HS = 64
  // bf16 only: the causal tiles of dSᵀ ("flash_mma_ds", 16-byte aligned),
  // written by the dk/dv kernel, read by the dq kernel; nullptr: dq
  // recomputes them.
  bf16* ds = nullptr;
};

// The dk/dv kernel, then the dq kernel, on `stream` over `grid` ((b, h)
// pairs along x, blocks of 64 positions along y), after D is written; with
// a.ds (bf16), the dq kernel that reads dS.
void launch_dkdv_dq(const Args<bf16>& a, dim3 grid, cudaStream_t stream);
void launch_dkdv_dq(const Args<float>& a, dim3 grid, cudaStream_t stream);

// Row i of a tile's per-row floats (lse·log₂e or D), 0 past T; loaded into a
// register first so that its latency hides behind the tile's products.
__device__ __forceinline__ float row_value(const float* src, index_t row0, int i, index_t T,
                                           float scale) {
  return row0 + i < T ? src[row0 + i] * scale : 0.f;
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
      const float p = valid ? backends::ptx::exp2_approx(s[nt][j] * scale2 - lse2[q]) : 0.f;
      dp[nt][j] = valid ? p * (dp[nt][j] - D[q]) : 0.f;
      s[nt][j] = p;
    }
}

// Rows r0..r0+15 of a 16 × 64 accumulator (channels), times `scale`, into
// dqkv's `part` (0 q, 1 k, 2 v) of head h, rows below T, channels below HS.
template <class E>
__device__ void store(const Args<E>& a, const float (&acc)[8][4], index_t b, index_t h, int part,
                      index_t r0, float scale) {
  const int lane = threadIdx.x % 32, g = lane / 4, c = lane % 4;
  for (int half = 0; half < 2; ++half) {
    const index_t t = r0 + g + 8 * half;
    if (t >= a.T) continue;
    E* const row = a.dqkv + (b * a.T + t) * 3 * a.C + part * a.C + h * a.HS;
    for (int nt = 0; nt < 8; ++nt)
      for (int j = 0; j < 2; ++j) {
        const int d = nt * 8 + 2 * c + j;
        if (d >= a.HS) continue;
        const float v = acc[nt][2 * half + j] * scale;
        row[d] = E(a.overwrite ? v : float(row[d]) + v);
      }
  }
}

}  // namespace llmk::op::attention_backward_recompute::flash_mma
