// Implementation "blocked": one pass over dout and inp, a team per block of
// rows computing their dinp and its block's partial column sums, then a pass
// adding the blocks' partials in order (kernels/layernorm_backward.hpp).
#pragma once

#include <ops/layernorm_backward/problem.hpp>

namespace llmk::op::layernorm_backward {

struct Blocked : ImplDefaults {
  static constexpr std::string_view name = "blocked";
  // A team per block: Kokkos 3 counts the league in int, but the plan has at
  // most LayernormTuning::max_blocks teams; the partial sums' workspace grows
  // with C only. Columns are int inside a row (fewer instructions a load).
  static constexpr index_t max_cols = core::kInt32Max;

  template <class ExecSpace, class P>
  static void workspace(core::WorkspaceSize& size, const Sizes& s) {
    size.add<float>(std::size_t(kernels::layernorm_blocked_workspace<ExecSpace>(s.M, s.C, s.bias)));
  }

  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    using Args = typename Problem<ExecSpace, P>::Args;
    float* partials = call.workspace.template take<float>(std::size_t(
        kernels::layernorm_blocked_workspace<ExecSpace>(p.M, p.C, p.has_bias())));
    kernels::LayernormBlocked<ExecSpace, Args>(p.args, partials).run(call.exec);
  }
};

}  // namespace llmk::op::layernorm_backward
