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
};

#ifdef KOKKOS_ENABLE_CUDA
// Cuda: a warp per row (GPT-2's T = 1024: 32 elements a lane), 8 rows (256
// threads) a team.
template <>
struct AttentionTuning<Kokkos::Cuda> {
  static constexpr int rows_per_team = 8;
  static constexpr int vector_length = 32;
};
#endif

}  // namespace llmk::kernels
