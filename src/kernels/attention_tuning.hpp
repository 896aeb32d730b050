// Per-backend launch parameters of the attention backward's kernels
// (kernels/attention_backward.hpp), as kernels/tuning.hpp holds the others':
// chosen at compile time from the execution space, so that the kernels have
// no backend #ifdefs.
#pragma once

#include <Kokkos_Core.hpp>

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

#ifdef KOKKOS_ENABLE_CUDA
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
#endif

}  // namespace llmk::kernels
