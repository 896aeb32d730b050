// Per-backend launch parameters of the attention backward's kernels
// (kernels/attention_backward.hpp), as kernels/tuning.hpp holds the others':
// chosen at compile time from the execution space, so that the kernels have
// no backend #ifdefs.
#pragma once

#include <Kokkos_Core.hpp>

namespace llmk::kernels {

// Hosts: a row of the softmax backward is one thread's loop.
template <class ExecSpace>
struct AttentionTuning {
  static constexpr int softmax_team_size = 1;
};

#ifdef KOKKOS_ENABLE_CUDA
// Cuda: 4 warps per row of up to T elements (GPT-2's T = 1024: 8 each per
// thread). Not measured yet.
template <>
struct AttentionTuning<Kokkos::Cuda> {
  static constexpr int softmax_team_size = 128;
};
#endif

}  // namespace llmk::kernels
