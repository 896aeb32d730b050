// Implementation "flash": flash-attention's backward on team scratch
// (kernels/attention_flash.hpp): D = rowsum(dout_h ⊙ out_h) by a thread per
// row into the workspace, then a team per block of keys accumulating its dk
// and dv over the causal query blocks, then a team per block of queries
// accumulating its dq over the causal key blocks, P and dS recomputed in
// each. Workspace: D, B·NH·T floats. Deterministic (no atomics; every sum in
// an order fixed by the sizes and the space's tuning).
#pragma once

#include <ops/attention_backward_recompute/problem.hpp>

namespace llmk::op::attention_backward_recompute {

struct Flash : ImplDefaults {
  static constexpr std::string_view name = "flash";

  static index_t d_floats(const Sizes& s) { return s.M * s.NH * s.T; }

  template <class ExecSpace, class P>
  static void workspace(core::WorkspaceSize& size, const Sizes& s) {
    size.add<float>(std::size_t(d_floats(s)));
  }

  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    float* const D = call.workspace.template take<float>(std::size_t(d_floats(p.sizes())));
    kernels::attention_flash_row_dots(call.exec, p.args, D);
    kernels::attention_flash_backward(call.exec, p.args, D);
  }
};

}  // namespace llmk::op::attention_backward_recompute
