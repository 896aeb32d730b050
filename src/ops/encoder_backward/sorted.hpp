// Implementation "sorted": the positions sorted by token on the device (a
// counting sort in integers, stable by construction), then each token's rows
// added in position order; dwpe's batch rows in order
// (kernels/encoder_backward.hpp).
#pragma once

#include <ops/encoder_backward/problem.hpp>

namespace llmk::op::encoder_backward {

struct Sorted : ImplDefaults {
  static constexpr std::string_view name = "sorted";
  // Positions and token counts are int in the sort's workspace.
  static constexpr index_t max_cols = core::kInt32Max;

  template <class ExecSpace, class P>
  static void workspace(core::WorkspaceSize& size, const Sizes& s) {
    size.add<int>(kernels::encoder_sort_ints(s.V, s.M));
  }

  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    check_tokens(call.exec, p);
    const index_t V = index_t(p.args.dwte.extent(0));
    int* w = call.workspace.template take<int>(kernels::encoder_sort_ints(V, p.M));
    const kernels::EncoderSortSpace space{w, w + V, w + 2 * V + 1, w + 3 * V + 1,
                                          w + 3 * V + 1 + p.M};
    kernels::encoder_sort_positions(call.exec, p.args, space);
    kernels::encoder_dwte(call.exec, p.args, space);
    kernels::encoder_dwpe(call.exec, p.args);
  }
};

}  // namespace llmk::op::encoder_backward
