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

// dbias as a column sum (bias_columns): a team sums a block of
// lanes × cols_per_lane columns over a segment of rows_per_segment rows; its
// team_size threads split the rows, and column j of lane l is
// c0 + j·lanes + l (so GPU lanes read consecutive columns, and a host thread,
// lanes = 1, sweeps cols_per_lane consecutive columns the compiler vectorizes).
template <class ExecSpace>
struct ColumnSumTuning {
  static constexpr int team_size = 1;
  static constexpr int lanes = 1;
  static constexpr int cols_per_lane = 32;  // four AVX2 registers of accumulators
  static constexpr int rows_per_segment = 512;
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

// Cuda: warps read 128-byte rows of 32 columns; 8 warps split a 256-row
// segment, so a seed-shape dout (8192 × 3072) gives 96 × 32 teams.
template <>
struct ColumnSumTuning<Kokkos::Cuda> {
  static constexpr int team_size = 8;
  static constexpr int lanes = 32;
  static constexpr int cols_per_lane = 1;
  static constexpr int rows_per_segment = 256;
};
#endif

}  // namespace llmk::kernels
