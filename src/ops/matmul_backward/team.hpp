// Implementation "team": a team per output row (ops/matmul_backward/row_products.hpp) for
// both products; dbias: the seed's shared-memory kernel (column_sums_team).
// Every precision: the row products sum in float into the gradient itself
// (float, +=) or into a float workspace that kernels/gemm_output.hpp then
// rounds into a bf16 gradient, scales by GELU's factor, or both.
#pragma once

#include <kernels/gemm_output.hpp>
#include <ops/matmul_backward/row_products.hpp>
#include <ops/matmul_backward/problem.hpp>

namespace llmk::op::matmul_backward {

struct Team : ImplDefaults {
  static constexpr std::string_view name = "team";
  static constexpr BiasPass bias = BiasPass::ColumnSumsTeam;
  template <class P>
  static constexpr bool supports = true;
  // A team per row of dinp (M) and of dweight (OC), a team per dbias channel:
  // Kokkos 3's league size is an int, and Kokkos 3.4's OpenMP TeamPolicy
  // never returns from its constructor for leagues above 1.07e9 to 1.68e9
  // teams (set_auto_chunk_size doubles an int chunk size until
  // chunk·100·threads reaches the league: the product overflows and wraps;
  // found by the M ≥ 2³¹ test): 2³⁰ teams at most.
  static constexpr index_t max_rows = index_t(1) << 30;
  static constexpr index_t max_cols = index_t(1) << 30;

  template <class ExecSpace, class P>
  using DinpOutput = kernels::GemmOutput<ExecSpace, typename P::dinp>;
  template <class ExecSpace, class P>
  using DweightOutput = kernels::GemmOutput<ExecSpace, typename P::dweight>;

  template <class ExecSpace, class P>
  static void workspace(core::WorkspaceSize& size, const Sizes& s) {
    size.add<float>(DinpOutput<ExecSpace, P>::workspace_floats(s.M, s.C, s.overwrite_dinp, s.gelu));
    size.add<float>(
        DweightOutput<ExecSpace, P>::workspace_floats(s.OC, s.C, s.overwrite_dweight, false));
  }

  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    const DinpOutput<ExecSpace, P> dinp(p.dinp, p.overwrite_dinp, p.has_gelu(), call.workspace);
    const DweightOutput<ExecSpace, P> dweight(p.dweight, p.overwrite_dweight, false,
                                              call.workspace);
    dinp.zero_if_overwritten(call.exec);
    kernels::team_row_products<false>(call.exec, "llmk::dinp_team", dinp.target(), p.dout,
                                      p.weight);
    dinp.finish(call.exec, p.pre_gelu);
    dweight.zero_if_overwritten(call.exec);
    kernels::team_row_products<true>(call.exec, "llmk::dweight_team", dweight.target(), p.dout,
                                     p.inp);
    dweight.finish(call.exec, p.pre_gelu);  // (no GELU on dweight: only the update)
    if (p.has_bias()) run_bias_pass(bias, call, p);
  }
};

}  // namespace llmk::op::matmul_backward
