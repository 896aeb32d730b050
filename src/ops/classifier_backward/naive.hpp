// Implementation "naive": a thread per row, three passes over it (max, sum,
// dlogits; ops/classifier_backward/kernels.hpp). The baseline the fused kernel
// is checked against, and the same results up to float rounding.
#pragma once

#include <ops/classifier_backward/problem.hpp>

namespace llmk::op::classifier_backward {

struct Naive : ImplDefaults {
  static constexpr std::string_view name = "naive";
  // A 64-bit range over rows; columns are int inside a row.
  static constexpr index_t max_cols = core::kInt32Max;

  template <class ExecSpace, class P>
  static void workspace(core::WorkspaceSize&, const Sizes&) {}

  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    kernels::classifier_rows_naive(call.exec, p.args);
  }
};

}  // namespace llmk::op::classifier_backward
