// Per-backend launch parameters of the portable kernels, chosen at compile
// time from the execution-space type. Kernels read them from here and contain
// no backend #ifdefs of their own.
#pragma once

#include <Kokkos_Core.hpp>

namespace llmk::kernels {

// Defaults for host spaces (Serial, OpenMP): one thread per team, no vector
// lanes; a team's work is a loop that the compiler vectorizes.
template <class ExecSpace>
struct TeamTuning {
  static constexpr int team_size = 1;
  static constexpr int vector_length = 1;
  static constexpr int reduce_team_size = 1;  // dbias: threads per output channel
  static constexpr int scratch_chunk = 1024;  // floats staged in team scratch per step
};

#ifdef KOKKOS_ENABLE_CUDA
// Cuda: a team is 8 warps-worth of (thread × lane) pairs; lanes run along the
// contiguous dimension so that a warp's loads are coalesced.
template <>
struct TeamTuning<Kokkos::Cuda> {
  static constexpr int team_size = 8;
  static constexpr int vector_length = 32;
  static constexpr int reduce_team_size = 512;  // as the seed's bias kernel
  static constexpr int scratch_chunk = 2048;
};
#endif

}  // namespace llmk::kernels
