// Implementation "team": a team per output row (kernels/row_products.hpp) for
// both products; dbias: the seed's shared-memory kernel (column_sums_team).
#pragma once

#include <kernels/row_products.hpp>
#include <ops/matmul_backward/problem.hpp>

namespace llmk::op::matmul_backward {

struct Team : ImplDefaults {
  static constexpr std::string_view name = "team";
  static constexpr BiasPass bias = BiasPass::ColumnSumsTeam;
  // A team per row of dinp (M) and of dweight (OC), a team per dbias channel:
  // Kokkos 3's league size is an int, and Kokkos 3.4's OpenMP TeamPolicy
  // never returns from its constructor for leagues above 1.07e9 to 1.68e9
  // teams (set_auto_chunk_size doubles an int chunk size until
  // chunk·100·threads reaches the league: the product overflows and wraps;
  // found by the M ≥ 2³¹ test): 2³⁰ teams at most.
  static constexpr index_t max_rows = index_t(1) << 30;
  static constexpr index_t max_cols = index_t(1) << 30;

  template <class ExecSpace>
  static void workspace(core::WorkspaceSize&, const Sizes&) {}

  template <class ExecSpace>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace>& p) {
    kernels::team_row_products<false>(call.exec, "llmk::dinp_team", p.dinp, p.dout, p.weight);
    kernels::team_row_products<true>(call.exec, "llmk::dweight_team", p.dweight, p.dout, p.inp);
    if (p.has_bias()) run_bias_pass(bias, call, p.dbias, p.dout);
  }
};

}  // namespace llmk::op::matmul_backward
