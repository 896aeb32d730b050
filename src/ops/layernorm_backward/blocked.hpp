// Implementation "blocked": one pass over dout and inp by blocks of rows, a
// team per block computing their dinp and its block's partial column sums,
// then a pass adding the blocks' partials in order. On a GPU, where C is a
// multiple of a 16-byte pack and the arrays are aligned to it, the block's
// rows are held in registers (ops/layernorm_backward/rows.hpp); otherwise, and
// on hosts, ops/layernorm_backward/kernels.hpp's LayernormBlocked.
#pragma once

#include <ops/layernorm_backward/rows.hpp>
#include <ops/layernorm_backward/problem.hpp>

#include <algorithm>

namespace llmk::op::layernorm_backward {

// An implementation whose kernels take one workspace of partial rows:
// Derived declares workspace_floats<ExecSpace, P>(sizes) and
// run_with(exec, problem, partials); the workspace query and run() follow.
template <class Derived>
struct WithPartialRows : ImplDefaults {
  template <class ExecSpace, class P>
  static void workspace(core::WorkspaceSize& size, const Sizes& s) {
    size.add<float>(std::size_t(Derived::template workspace_floats<ExecSpace, P>(s)));
  }

  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    float* partials = call.workspace.template take<float>(
        std::size_t(Derived::template workspace_floats<ExecSpace, P>(p.sizes())));
    Derived::run_with(call.exec, p, partials);
  }
};

struct Blocked : WithPartialRows<Blocked> {
  static constexpr std::string_view name = "blocked";
  // A team per block: Kokkos 3 counts the league in int, but the plans have
  // at most LayernormTuning::max_blocks teams; the partial sums' workspace
  // grows with C only. Columns are int inside a row (fewer instructions a
  // load).
  static constexpr index_t max_cols = core::kInt32Max;

  // Either kernel's partial rows (which one runs depends on the arrays'
  // alignment too, not known here).
  template <class ExecSpace, class P>
  static index_t workspace_floats(const Sizes& s) {
    return std::max(kernels::layernorm_blocked_workspace<ExecSpace>(s.M, s.C, s.bias),
                    kernels::layernorm_rows_workspace<ExecSpace, typename P::in>(s.M, s.C, s.bias));
  }

  // The kernels, given workspace_floats of partials ("warp_rows" falls
  // back to them).
  template <class ExecSpace, class P>
  static void run_with(const ExecSpace& exec, const Problem<ExecSpace, P>& p, float* partials) {
    using Args = typename Problem<ExecSpace, P>::Args;
    using Tuning = kernels::LayernormTuning<ExecSpace>;
    if constexpr (Tuning::rows_in_registers) {
      const auto rows = kernels::layernorm_rows_plan<typename P::in, Tuning>(p.M, p.C);
      if (rows.warps_per_row > 0 && kernels::layernorm_rows_fit<Tuning>(p.args)) {
        return kernels::run_layernorm_rows(exec, p.args, rows, partials);
      }
    }
    kernels::LayernormBlocked<ExecSpace, Args>(p.args, partials).run(exec);
  }
};

}  // namespace llmk::op::layernorm_backward
