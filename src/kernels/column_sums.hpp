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

#include <algorithm>
#include <cstdint>

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

// column_sums: dbias ⟵ Σ_rows dout in two kernels.
// Pass 1: a team sums a segment of rows_per_thread·team_size rows of a block
// of lanes × cols_per_lane columns; its team_size threads split the rows and
// each lane owns cols_per_lane CONSECUTIVE columns (lane_bytes of them: on a
// GPU one 16-byte load per row, so a warp reads 512 contiguous bytes of a
// row), summed in float registers over a compile-time trip count (unrolled:
// many independent loads in flight). The threads' sums are added in thread
// order through team scratch into partial[segment][column].
// Pass 2: dbias(c) ⟵ Σ_segments partial: a team per lanes columns (coalesced
// reads), its threads take every team_size-th segment and sum in double, and
// their sums are added in thread order. (One thread per column summing every
// segment took a large part of the pass at the seed shape: few threads, each
// with a chain of dependent loads.)
// Deterministic: no atomics, every sum in a fixed order.
template <class ExecSpace, class TOut, class TIn, class Tuning = ColumnSumTuning<ExecSpace>>
class ColumnSums {
 public:
  using Policy = Kokkos::TeamPolicy<ExecSpace, Kokkos::IndexType<index_t>>;
  using Member = typename Policy::member_type;
  using Scratch = Kokkos::View<float**, Kokkos::LayoutRight, typename ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  static constexpr int team_size = Tuning::team_size, lanes = Tuning::lanes;
  static constexpr int cols_per_lane = Tuning::lane_bytes / int(sizeof(TIn));
  static constexpr int rows_per_thread = Tuning::template rows_per_thread<TIn>;
  static constexpr index_t block_cols = lanes * cols_per_lane;
  static constexpr index_t segment_rows = index_t(rows_per_thread) * team_size;

  // Floats of workspace for an M × OC dout: one partial sum per segment and column.
  static index_t workspace_floats(const index_t M, const index_t OC) {
    return (M + segment_rows - 1) / segment_rows * OC;
  }

  // `partial`: workspace_floats(M, OC) floats in ExecSpace's memory.
  ColumnSums(const Vector<ExecSpace, TOut>& dbias, const ConstMatrix<ExecSpace, TIn>& dout,
             float* const partial, const bool overwrite)
      : dbias_(dbias),
        dout_(dout.data()),
        partial_(partial),
        M_(dout.extent(0)),
        OC_(dout.extent(1)),
        col_blocks_((OC_ + block_cols - 1) / block_cols),
        segments_((M_ + segment_rows - 1) / segment_rows),
        overwrite_(overwrite),
        // Whole-pack loads need every row's pack at a multiple of its size.
        packed_(Tuning::pack_loads &&
                reinterpret_cast<std::uintptr_t>(dout.data()) % sizeof(Pack) == 0 &&
                (OC_ * index_t(sizeof(TIn))) % index_t(sizeof(Pack)) == 0) {}

  void run(const ExecSpace& exec) const {
    run_partial(exec);
    run_final(exec);
  }
  void run_partial(const ExecSpace& exec) const {
    Policy policy(exec, col_blocks_ * segments_, team_size, lanes);
    policy = policy.set_scratch_size(0, Kokkos::PerTeam(Scratch::shmem_size(team_size, block_cols)));
    Kokkos::parallel_for("llmk::column_sums_partial", policy, *this);
  }
  void run_final(const ExecSpace& exec) const {
    FinalPolicy final_policy(exec, (OC_ + lanes - 1) / lanes, team_size, lanes);
    final_policy = final_policy.set_scratch_size(
        0, Kokkos::PerTeam(FinalScratch::shmem_size(team_size, lanes)));
    Kokkos::parallel_for("llmk::column_sums_final", final_policy, *this);
  }

  struct Final {};
  using FinalPolicy = Kokkos::TeamPolicy<ExecSpace, Kokkos::IndexType<index_t>, Final>;
  using FinalScratch = Kokkos::View<double**, Kokkos::LayoutRight,
                                    typename ExecSpace::scratch_memory_space,
                                    Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  // Pass 1: partial(seg, c) = Σ over the segment's rows of dout(m, c).
  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    const index_t block = team.league_rank() % col_blocks_;
    const index_t seg = team.league_rank() / col_blocks_;
    const index_t c0 = block * block_cols, m0 = seg * segment_rows;
    const bool full_block = c0 + block_cols <= OC_ && m0 + segment_rows <= M_;
    const Scratch thread_sums(team.team_scratch(0), team_size, block_cols);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, team_size), [&](const int t) {
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, lanes), [&](const int lane) {
        const index_t c = c0 + lane * cols_per_lane;  // the lane's first column
        float acc[cols_per_lane] = {};
        if (full_block && packed_) {  // the common case: whole packs, no bounds checks
          for (int r = 0; r < rows_per_thread; ++r) {
            const Pack pack = *reinterpret_cast<const Pack*>(row(m0 + t + index_t(r) * team_size, c));
            for (int j = 0; j < cols_per_lane; ++j) acc[j] += to_float(pack.v[j]);
          }
        } else if (full_block) {
          for (int r = 0; r < rows_per_thread; ++r) {
            const TIn* const x = row(m0 + t + index_t(r) * team_size, c);
            for (int j = 0; j < cols_per_lane; ++j) acc[j] += to_float(x[j]);
          }
        } else {
          for (int r = 0; r < rows_per_thread; ++r) {
            const index_t m = m0 + t + index_t(r) * team_size;
            if (m >= M_) break;
            for (int j = 0; j < cols_per_lane; ++j)
              if (c + j < OC_) acc[j] += to_float(*row(m, c + j));
          }
        }
        for (int j = 0; j < cols_per_lane; ++j) thread_sums(t, lane * cols_per_lane + j) = acc[j];
      });
    });
    team.team_barrier();
    // Threads' sums are added in thread order: the result does not depend on timing.
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, cols_per_lane), [&](const int j) {
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, lanes), [&](const int lane) {
        const index_t col = j * lanes + lane;
        if (c0 + col >= OC_) return;
        float sum = 0.0f;
        for (int t = 0; t < team_size; ++t) sum += thread_sums(t, col);
        partial_[seg * OC_ + c0 + col] = sum;
      });
    });
  }

  // Pass 2: dbias(c) ⟵ Σ_seg partial(seg, c) for the team's lanes columns.
  KOKKOS_INLINE_FUNCTION void operator()(Final, const typename FinalPolicy::member_type& team) const {
    const index_t c0 = team.league_rank() * lanes;
    const FinalScratch thread_sums(team.team_scratch(0), team_size, lanes);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, team_size), [&](const int t) {
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, lanes), [&](const int lane) {
        double sum = 0.0;
        if (c0 + lane < OC_)
          for (index_t seg = t; seg < segments_; seg += team_size) sum += partial_[seg * OC_ + c0 + lane];
        thread_sums(t, lane) = sum;
      });
    });
    team.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, 1), [&](int) {
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, lanes), [&](const int lane) {
        if (c0 + lane >= OC_) return;
        double sum = 0.0;
        for (int t = 0; t < team_size; ++t) sum += thread_sums(t, lane);
        update(dbias_(c0 + lane), float(sum), overwrite_);
      });
    });
  }

 private:
  // One lane's columns of a row, loaded at once (a 16-byte load on a GPU).
  struct alignas(cols_per_lane * sizeof(TIn)) Pack {
    TIn v[cols_per_lane];
  };

  KOKKOS_INLINE_FUNCTION const TIn* row(const index_t m, const index_t c) const {
    return dout_ + m * OC_ + c;
  }

  Vector<ExecSpace, TOut> dbias_;
  const TIn* dout_;
  float* partial_;
  index_t M_, OC_, col_blocks_, segments_;
  bool overwrite_, packed_;
};

// Floats of workspace column_sums needs for an M × OC dout (of either element type).
template <class ExecSpace>
index_t column_sums_workspace(index_t M, index_t OC) {
  return std::max(ColumnSums<ExecSpace, float, float>::workspace_floats(M, OC),
                  ColumnSums<ExecSpace, float, bf16>::workspace_floats(M, OC));
}

// `partial`: column_sums_workspace<ExecSpace>(M, OC) floats in ExecSpace's memory.
// overwrite: dbias = the sums (not read), else dbias += the sums.
template <class ExecSpace, class TOut, class TIn>
void column_sums(const ExecSpace& exec, const Vector<ExecSpace, TOut>& dbias,
                 const ConstMatrix<ExecSpace, TIn>& dout, float* const partial,
                 const bool overwrite) {
  ColumnSums<ExecSpace, TOut, TIn>(dbias, dout, partial, overwrite).run(exec);
}

}  // namespace llmk::kernels
