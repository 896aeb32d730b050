// Implementation "naive": a thread per row of dinp, a thread per column of
// dweight and dbias summing every row in order (ops/layernorm_backward/kernels.hpp).
// Two passes over dout and inp, the second reading down columns: the baseline.
#pragma once

#include <ops/layernorm_backward/problem.hpp>

namespace llmk::op::layernorm_backward {

struct Naive : ImplDefaults {
  static constexpr std::string_view name = "naive";
  // 64-bit range policies: no row limit.

  template <class ExecSpace, class P>
  static void workspace(core::WorkspaceSize&, const Sizes&) {}

  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    kernels::layernorm_rows_naive(call.exec, p.args);
    kernels::layernorm_columns_naive(call.exec, p.args);
  }
};

}  // namespace llmk::op::layernorm_backward
