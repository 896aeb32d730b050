// dbias[o] += Σ_m dout[m, o]: two portable Kokkos reductions, the seed's
// naive kernel (one thread per channel) and its shared-memory kernel (one team
// per channel, coarsened thread sums, a team reduction). Both accumulate in
// double and add the result to dbias (not overwrite).
#pragma once

#include <llmk/kernels/tuning.hpp>
#include <llmk/types.hpp>

namespace llmk::kernels {

template <class ExecSpace>
void bias_naive(const ExecSpace& exec, const Vector<ExecSpace>& dbias,
                const ConstMatrix<ExecSpace>& dout) {
  const index_t M = dout.extent(0);
  Kokkos::parallel_for(
      "llmk::bias_naive", Range<ExecSpace>(exec, 0, index_t(dout.extent(1))),
      KOKKOS_LAMBDA(const index_t o) {
        double sum = 0.0;
        for (index_t m = 0; m < M; ++m) sum += dout(m, o);
        dbias(o) += float(sum);
      });
}

template <class ExecSpace>
void bias_team(const ExecSpace& exec, const Vector<ExecSpace>& dbias,
               const ConstMatrix<ExecSpace>& dout) {
  using Policy = Kokkos::TeamPolicy<ExecSpace, Kokkos::IndexType<index_t>>;
  using Member = typename Policy::member_type;
  const index_t M = dout.extent(0);
  const Policy policy(exec, index_t(dout.extent(1)), TeamTuning<ExecSpace>::reduce_team_size);
  Kokkos::parallel_for(
      "llmk::bias_team", policy, KOKKOS_LAMBDA(const Member& team) {
        const index_t o = team.league_rank();
        double sum = 0.0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, M),
            [&](const index_t m, double& partial) { partial += dout(m, o); }, sum);
        Kokkos::single(Kokkos::PerTeam(team), [&]() { dbias(o) += float(sum); });
      });
}

}  // namespace llmk::kernels
