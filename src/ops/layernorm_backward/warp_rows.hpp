// Implementation "warp_rows", for Kokkos::Cuda: a warp a row, the rows
// streamed into shared memory. A grid of one block of 8 warps an SM; warp
// g of the grid takes rows g, g + W, g + 2W, ... (W warps in all), and
// each lane copies its own 16-byte chunks of the next rows of dout, inp
// and (accumulated) dinp into the warp's stages with cp.async, up to 4
// rows ahead, while it computes the current one from shared memory: the
// loads in flight no longer wait for registers or for the row before
// them. The row's two sums by the warp's shuffles (no barrier), dinp
// stored, and the lane's columns of dweight and dbias summed in registers
// over all its rows; at the end the block adds its warps' sums in warp
// order and writes one partial row, and after a grid-wide barrier (the
// launch is cooperative: every block resident at once) the grid adds the
// blocks' rows in block order into dweight and dbias. Deterministic: the
// order is fixed by M, C and the grid (the device's SM count), so the bits
// are the same from run to run on a device (not across devices with other
// SM counts).
// Why: "blocked"'s rows kernel (ops/layernorm_backward/rows.hpp) holds a row in
// registers, so registers decide the warps an SM holds, and each group of
// warps waits on its step's loads, then reduces, then stores, with no
// loads in flight meanwhile. H200, B 8, T 1024, dinp accumulated, device
// time, both in one run (call L5 of 2026-12-04): C = 768 bf16 0.026 ms
// (71 % of a copy of its bytes) against "blocked"'s 0.038 (48 %), fp32
// 0.035 (87 %) against 0.049; C = 1600 bf16 0.042 (74 %) against 0.058.
// GPT-2 124M's backward, bf16: 10.95 ms against 11.18 with "blocked"'s
// (same call). What is left to a copy in bf16: the first rows' latency
// (each warp has ~8 rows at that shape) and the grid barrier.
// Defined in backends/cuda/layernorm_warp_rows.cpp (CUDA builds only).
//
// What it runs: C a multiple of a 16-byte chunk (8 bf16 or 4 floats) whose
// rows a lane holds in at most kWarpRowsMaxChunks chunks (bf16: C ≤ 2048,
// fp32: C ≤ 1024), every row array and the weight aligned to 16 bytes, and
// at least two stages of 8 rows fitting the shared memory (fp32 C = 1600
// does not), and a device that launches the grid cooperatively (every
// block resident at once). Anything else runs "blocked"'s kernels (the
// same results within tolerance, its speed).
#pragma once

#include <llmk/compat.hpp>
#include <ops/layernorm_backward/blocked.hpp>

#include <algorithm>

namespace llmk::op::layernorm_backward {

// A lane's 16-byte chunks of a row, at most (its column sums are 2·8·V
// registers' worth of floats).
inline constexpr int kWarpRowsMaxChunks = 8;
// The grid's blocks, at most (one an SM: 132 on the H200); the partial
// rows' workspace is sized for this many.
inline constexpr index_t kWarpRowsMaxBlocks = 512;
inline constexpr index_t kWarpRowsWarps = 8;  // a block's

// Floats of workspace for the blocks' partial rows.
inline index_t warp_rows_workspace(const Sizes& s) {
  if (s.M == 0 || s.C == 0) return 0;
  const index_t blocks = std::min(kWarpRowsMaxBlocks, (s.M + kWarpRowsWarps - 1) / kWarpRowsWarps);
  return blocks * s.C * (s.bias ? 2 : 1);
}

// Runs the call and returns true, or returns false, having launched
// nothing, where the kernel does not take it (the header says when).
template <class ExecSpace, class Args>
bool warp_rows_run(const ExecSpace& exec, const Args& a, float* partials);

struct WarpRows : core::op::OnCuda<WithPartialRows<WarpRows>, LLMK_HAVE_CUDA> {
  static constexpr std::string_view name = "warp_rows";
  static constexpr index_t max_cols = Blocked::max_cols;

  // Its own partial rows, or "blocked"'s where it falls back.
  template <class ExecSpace, class P>
  static index_t workspace_floats(const Sizes& s) {
    return std::max(warp_rows_workspace(s), Blocked::workspace_floats<ExecSpace, P>(s));
  }

  template <class ExecSpace, class P>
  static void run_with(const ExecSpace& exec, const Problem<ExecSpace, P>& p, float* partials) {
    if (!warp_rows_run(exec, p.args, partials)) Blocked::run_with(exec, p, partials);
  }
};

}  // namespace llmk::op::layernorm_backward
