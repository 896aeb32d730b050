// Column sums of a row-major matrix, out[c] ⟵ Σ_r in[r, c]: a building block
// of every operation whose gradient sums over rows (matmul's dbias,
// layernorm's dgamma and dbeta). Portable Kokkos, for float or bf16 in and
// out (sums in float or double, one rounding into out), adding to `out` or
// overwriting it (kernels/update.hpp), and all deterministic (no
// floating-point atomics):
//  - column_sums_naive: the seed's naive bias kernel, one thread per column
//                       (double sums);
//  - column_sums_team:  the seed's shared-memory bias kernel, one team per
//                       column, coarsened thread sums, a team reduction;
//  - column_sums:       bandwidth-bound. Reading a column of a row-major
//                       matrix is a strided gather; instead, teams read row
//                       segments of a block of columns (coalesced on GPUs,
//                       unit-stride on CPUs), then a second pass adds the
//                       segments' partial sums, kept in a workspace.
#pragma once

#include <kernels/tuning.hpp>
#include <kernels/update.hpp>
#include <llmk/types.hpp>

namespace llmk::kernels {

template <class ExecSpace, class TOut, class TIn>
void column_sums_naive(const ExecSpace& exec, const Vector<ExecSpace, TOut>& dbias,
                       const ConstMatrix<ExecSpace, TIn>& dout, const bool overwrite) {
  const index_t M = dout.extent(0);
  Kokkos::parallel_for(
      "llmk::column_sums_naive", Range<ExecSpace>(exec, 0, index_t(dout.extent(1))),
      KOKKOS_LAMBDA(const index_t o) {
        double sum = 0.0;
        for (index_t m = 0; m < M; ++m) sum += to_float(dout(m, o));
        update(dbias(o), float(sum), overwrite);
      });
}

template <class ExecSpace, class TOut, class TIn>
void column_sums_team(const ExecSpace& exec, const Vector<ExecSpace, TOut>& dbias,
                      const ConstMatrix<ExecSpace, TIn>& dout, const bool overwrite) {
  using Policy = Kokkos::TeamPolicy<ExecSpace, Kokkos::IndexType<index_t>>;
  using Member = typename Policy::member_type;
  const index_t M = dout.extent(0);
  const Policy policy(exec, index_t(dout.extent(1)), TeamTuning<ExecSpace>::reduce_team_size);
  Kokkos::parallel_for(
      "llmk::column_sums_team", policy, KOKKOS_LAMBDA(const Member& team) {
        const index_t o = team.league_rank();
        double sum = 0.0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, M),
            [&](const index_t m, double& partial) { partial += to_float(dout(m, o)); }, sum);
        Kokkos::single(Kokkos::PerTeam(team), [&]() { update(dbias(o), float(sum), overwrite); });
      });
}

// Floats of workspace column_sums needs for an M × OC matrix: one partial sum
// per row segment and column.
template <class ExecSpace>
index_t column_sums_workspace(index_t M, index_t OC) {
  constexpr index_t segment_rows = ColumnSumTuning<ExecSpace>::rows_per_segment;
  return (M + segment_rows - 1) / segment_rows * OC;
}

// `partial`: column_sums_workspace(M, OC) floats in ExecSpace's memory.
// overwrite: dbias = the sums (not read), else dbias += the sums.
template <class ExecSpace, class TOut, class TIn>
void column_sums(const ExecSpace& exec, const Vector<ExecSpace, TOut>& dbias,
                 const ConstMatrix<ExecSpace, TIn>& dout, float* const partial,
                 const bool overwrite) {
  using Tuning = ColumnSumTuning<ExecSpace>;
  using Policy = Kokkos::TeamPolicy<ExecSpace, Kokkos::IndexType<index_t>>;
  using Member = typename Policy::member_type;
  using Scratch = Kokkos::View<float**, Kokkos::LayoutRight, typename ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  constexpr int team_size = Tuning::team_size, lanes = Tuning::lanes;
  constexpr int cols_per_lane = Tuning::cols_per_lane;
  constexpr index_t block_cols = lanes * cols_per_lane, segment_rows = Tuning::rows_per_segment;
  constexpr int rows_per_thread = Tuning::rows_per_segment / team_size;
  static_assert(Tuning::rows_per_segment % team_size == 0, "a segment splits evenly over threads");
  const index_t M = dout.extent(0), OC = dout.extent(1);
  const index_t col_blocks = (OC + block_cols - 1) / block_cols;
  const index_t segments = (M + segment_rows - 1) / segment_rows;
  // partial: [segment][column]

  // Pass 1: partial(seg, c) = Σ over the segment's rows of dout(m, c).
  Policy policy(exec, col_blocks * segments, team_size, lanes);
  policy = policy.set_scratch_size(0, Kokkos::PerTeam(Scratch::shmem_size(team_size, block_cols)));
  Kokkos::parallel_for(
      "llmk::column_sums_partial", policy, KOKKOS_LAMBDA(const Member& team) {
        const index_t block = team.league_rank() % col_blocks;
        const index_t seg = team.league_rank() / col_blocks;
        const index_t c0 = block * block_cols, m0 = seg * segment_rows;
        const bool full_block = c0 + block_cols <= OC && m0 + segment_rows <= M;
        Scratch thread_sums(team.team_scratch(0), team_size, block_cols);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, team_size), [&](const int t) {
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, lanes), [&](const int lane) {
            float acc[cols_per_lane] = {};
            // A compile-time trip count: the GPU compiler unrolls it and keeps
            // many independent loads in flight (a memory-bound loop is bound
            // by the bytes each warp has in flight, not by the adds).
            for (int r = 0; r < rows_per_thread; ++r) {
              const index_t m = m0 + t + index_t(r) * team_size;
              if (full_block) {  // the common case, free of bounds checks
                for (int j = 0; j < cols_per_lane; ++j)
                  acc[j] += to_float(dout(m, c0 + j * lanes + lane));
              } else if (m < M) {
                for (int j = 0; j < cols_per_lane; ++j)
                  if (c0 + j * lanes + lane < OC) acc[j] += to_float(dout(m, c0 + j * lanes + lane));
              }
            }
            for (int j = 0; j < cols_per_lane; ++j) thread_sums(t, j * lanes + lane) = acc[j];
          });
        });
        team.team_barrier();
        // Threads' sums are added in thread order: the result does not depend on timing.
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, cols_per_lane), [&](const int j) {
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, lanes), [&](const int lane) {
            const index_t col = j * lanes + lane;
            if (c0 + col >= OC) return;
            float sum = 0.0f;
            for (int t = 0; t < team_size; ++t) sum += thread_sums(t, col);
            partial[seg * OC + c0 + col] = sum;
          });
        });
      });

  // Pass 2: dbias(c) += Σ_seg partial(seg, c), segments in order, in double.
  Kokkos::parallel_for(
      "llmk::column_sums_final", Range<ExecSpace>(exec, 0, OC), KOKKOS_LAMBDA(const index_t c) {
        double sum = 0.0;
        for (index_t seg = 0; seg < segments; ++seg) sum += partial[seg * OC + c];
        update(dbias(c), float(sum), overwrite);
      });
}

}  // namespace llmk::kernels
