// Implementation "naive": the formulas' loops (kernels/attention_backward.hpp):
// a thread per row for drow, then a thread per element of dqkv summing its
// causal range, datt recomputed as it goes (HS multiply-adds per term of dq
// and dk). No T × T array: its workspace is drow, B·NH·T floats, so it runs
// wherever the arguments fit. The baseline, and slow (a factor HS more
// multiply-adds than the products need).
#pragma once

#include <ops/attention_backward/problem.hpp>

namespace llmk::op::attention_backward {

struct Naive : ImplDefaults {
  static constexpr std::string_view name = "naive";
  // 64-bit range policies: no limits.

  static index_t drow_floats(const Sizes& s) { return s.M * s.NH * s.T; }

  template <class ExecSpace, class P>
  static void workspace(core::WorkspaceSize& size, const Sizes& s) {
    size.add<float>(std::size_t(drow_floats(s)));
  }

  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    float* const drow = call.workspace.template take<float>(std::size_t(drow_floats(p.sizes())));
    kernels::attention_row_sums_naive(call.exec, p.args, drow);
    kernels::attention_dqkv_naive(call.exec, p.args, drow);
  }
};

}  // namespace llmk::op::attention_backward
