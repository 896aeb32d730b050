// Per-backend launch parameters of the attention backward's kernels
// (kernels/attention_backward.hpp), as kernels/tuning.hpp holds the others':
// chosen at compile time from the execution space, so that the kernels have
// no backend #ifdefs.
#pragma once

#include <kernels/tuning.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>

namespace llmk::kernels {

// The T × T steps (attention_for_rows): rows_per_team rows of
// vector_length lanes each. Hosts: a row is one thread's loop.
template <class ExecSpace>
struct AttentionTuning {
  static constexpr int rows_per_team = 1;
  static constexpr int vector_length = 1;
  // Elements a lane takes at once in the softmax pass (1: one at a time).
  // 4 as on Cuda, so that the host tests run the packed rows too (shapes
  // with T % 4 == 0; the others take the scalar rows).
  static constexpr int softmax_pack = 4;
};

// The recompute backward (kernels/attention_flash.hpp): FlashDkDv owns
// dkdv_keys keys and streams dkdv_queries queries a step, FlashDq owns
// dq_queries queries and streams dq_keys keys; a team of team_size threads
// keeps its tiles in scratch_level scratch, at most scratch_bytes (smaller
// blocks for wide heads: flash_tiles). channels_inner (hosts): a thread
// computes the tile's products a register block of 4 rows × 64 (or 16)
// columns at a time (kernels/block_product.hpp: the scores along the keys,
// from the key block transposed, the accumulators along the channels), then
// P and dS a query row at a time, loops the compiler vectorizes; otherwise
// (a GPU's) a thread per micro-tile of score_rows × score_cols pairs, then
// per micro-tile of acc_rows × acc_cols accumulator elements, reads of
// consecutive channels by consecutive threads.
// Hosts: one thread per team, 64-row blocks (HS = 64: 6 tiles of 16 KiB,
// the 64 × 64 P and dS and k, v transposed, 164 KiB in L2).
template <class ExecSpace>
struct FlashAttentionTuning {
  static constexpr int team_size = 1;
  static constexpr int dkdv_keys = 64, dkdv_queries = 64;
  static constexpr int dq_queries = 64, dq_keys = 64;
  static constexpr int scratch_level = 0;
  static constexpr std::size_t scratch_bytes = std::size_t(1) << 20;
  static constexpr bool channels_inner = true;
  static constexpr int score_rows = 1, score_cols = 1, acc_rows = 1, acc_cols = 1;  // unused
};

// "materialized"'s products of T × HS (dv, dq, dk; HS = 64 in GPT-2) through
// the tiled GEMM: the space's own tuning, but on Cuda tiles as wide as a
// head (AttentionTiledTuning<Kokkos::Cuda> below).
template <class ExecSpace>
struct AttentionTiledTuning : TiledTuning<ExecSpace> {};

#ifdef KOKKOS_ENABLE_CUDA
// Cuda: the shipped tiles are 128 × 128; over HS = 64 columns half of each
// tile's threads would multiply the zeros staged past D's edge. Here 8 rows
// of 16 lanes own 128 × 64 tiles (the same 16 × 4 micro-tile a thread, the
// same registers), 128 threads a team and 4 teams an SM (25 KiB of shared
// memory each), so as many threads stay resident.
template <>
struct AttentionTiledTuning<Kokkos::Cuda> : TiledTuning<Kokkos::Cuda> {
  static constexpr int team_size = 8, vector_length = 16;
  static constexpr int bm = 128, bn = 64;
  using launch_bounds = Kokkos::LaunchBounds<128, 4>;
  static index_t resident_teams() {
    return index_t(Kokkos::Cuda().cuda_device_prop().multiProcessorCount) * 4;
  }
};

// Cuda: a warp per row (GPT-2's T = 1024: 32 elements a lane), 8 rows (256
// threads) a team.
template <>
struct AttentionTuning<Kokkos::Cuda> {
  static constexpr int rows_per_team = 8;
  static constexpr int vector_length = 32;
  // 4 elements a lane: 16-byte loads of datt, 8-byte loads and stores of
  // bf16 (one element a lane: 331 µs for the pass at B 8, T 1024 in bf16,
  // 56 % of the copy bandwidth).
  static constexpr int softmax_pack = 4;
};

// Cuda: 4 warps a team within 40 KiB of shared memory (Kokkos 3.4's
// TeamPolicy::scratch_size_max(0): a block gets 48 KiB without opting in,
// Kokkos keeps the rest for its team reductions). FlashDkDv owns 16 keys
// and streams 32 queries, FlashDq owns 32 queries and streams 16 keys: a
// 32 × 16 tile of P and dS, 2 × 2 pairs a thread (128 micro-tiles, one
// each), and at HS = 64 37 632 bytes of tiles each (6 teams an SM). The
// accumulators' micro-tiles 2 × 2: 2 a thread for dk and dv (16 × 64), 4
// for dq (32 × 64). A first guess, not measured yet.
template <>
struct FlashAttentionTuning<Kokkos::Cuda> {
  static constexpr int team_size = 128;
  static constexpr int dkdv_keys = 16, dkdv_queries = 32;
  static constexpr int dq_queries = 32, dq_keys = 16;
  static constexpr int scratch_level = 0;
  static constexpr std::size_t scratch_bytes = 40 * 1024;
  static constexpr bool channels_inner = false;
  static constexpr int score_rows = 2, score_cols = 2, acc_rows = 2, acc_cols = 2;
};
#endif

}  // namespace llmk::kernels
