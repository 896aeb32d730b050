// Implementation "fused": a team per row (llm.c's fused_classifier), 16-byte
// loads where the rows are aligned to them, the row's max and sum in one
// online pass, reduced over the team, then dlogits from a second read of the
// row, which the first left in the cache (ops/classifier_backward/kernels.hpp).
// On a host: a thread per row, its max, sum and dlogits in three vectorized
// passes, the row read from memory once (classifier_row_host).
#pragma once

#include <ops/classifier_backward/problem.hpp>

namespace llmk::op::classifier_backward {

struct Fused : ImplDefaults {
  static constexpr std::string_view name = "fused";
  // A team per row: Kokkos 3 counts the league in int. A lane's column
  // index steps by the team's width past the row's end: half of int's range
  // leaves room for it.
  static constexpr index_t max_rows = core::kInt32Max;
  static constexpr index_t max_cols = core::kInt32Max / 2;

  template <class ExecSpace, class P>
  static void workspace(core::WorkspaceSize&, const Sizes&) {}

  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    kernels::run_classifier_rows(call.exec, p.args);
  }
};

}  // namespace llmk::op::classifier_backward
