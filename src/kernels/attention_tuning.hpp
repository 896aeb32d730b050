// Per-backend launch parameters of the attention backward's kernels
// (kernels/attention_backward.hpp), as kernels/tuning.hpp holds the others':
// chosen at compile time from the execution space, so that the kernels have
// no backend #ifdefs.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstddef>

namespace llmk::kernels {

// Hosts: a row of the softmax backward is one thread's loop.
template <class ExecSpace>
struct AttentionTuning {
  static constexpr int softmax_team_size = 1;
};

// The recompute backward (kernels/attention_flash.hpp): FlashDkDv owns
// dkdv_keys keys and streams dkdv_queries queries a step, FlashDq owns
// dq_queries queries and streams dq_keys keys; a team of team_size threads
// keeps its tiles in scratch_level scratch, at most scratch_bytes (smaller
// blocks for wide heads: flash_tiles). channels_inner: a thread adds a tile's
// terms to whole rows of the accumulators, channels innermost (host loops
// that vectorize), rather than a thread per accumulator element summing its
// column of the tile (a GPU's, reads of consecutive channels coalesced).
// Hosts: one thread per team, 64-row blocks (HS = 64: 4 tiles of 16 KiB and
// the 64 × 64 P and dS, 130 KiB in L2). Not tuned by measurement yet.
template <class ExecSpace>
struct FlashAttentionTuning {
  static constexpr int team_size = 1;
  static constexpr int dkdv_keys = 64, dkdv_queries = 64;
  static constexpr int dq_queries = 64, dq_keys = 64;
  static constexpr int scratch_level = 0;
  static constexpr std::size_t scratch_bytes = std::size_t(1) << 20;
  static constexpr bool channels_inner = true;
};

#ifdef KOKKOS_ENABLE_CUDA
// Cuda: 4 warps per row of up to T elements (GPT-2's T = 1024: 8 each per
// thread). Not measured yet.
template <>
struct AttentionTuning<Kokkos::Cuda> {
  static constexpr int softmax_team_size = 128;
};

// Cuda: 4 warps a team, blocks of 32 owned and 16 streamed rows, within
// 40 KiB of shared memory (Kokkos 3.4's TeamPolicy::scratch_size_max(0): a
// block gets 48 KiB without opting in, Kokkos keeps the rest for its team
// reductions). At HS = 64 FlashDq's tiles take 37 632 bytes; FlashDkDv's
// would take 45 952, so flash_tiles halves its streamed block to 8 queries
// (39 736 bytes). Not measured yet.
template <>
struct FlashAttentionTuning<Kokkos::Cuda> {
  static constexpr int team_size = 128;
  static constexpr int dkdv_keys = 32, dkdv_queries = 16;
  static constexpr int dq_queries = 32, dq_keys = 16;
  static constexpr int scratch_level = 0;
  static constexpr std::size_t scratch_bytes = 40 * 1024;
  static constexpr bool channels_inner = false;
};
#endif

}  // namespace llmk::kernels
