// The layer-norm backward as the shared framework sees it (core/op/): its
// implementations in the order "auto" prefers them, its precisions, the
// limits its sizes meet, and what a call without rows still writes.
#pragma once

#include <core/op/call.hpp>
#include <core/op/typed.hpp>
#include <core/registry.hpp>
#include <ops/layernorm_backward/blocked.hpp>
#include <ops/layernorm_backward/naive.hpp>
#include <ops/layernorm_backward/warp_rows.hpp>

namespace llmk::op::layernorm_backward {

// "warp_rows" streams the rows through shared memory on Cuda (falling back
// to "blocked" where it cannot); "blocked" reads dout and inp once and
// coalesced; "naive" is the baseline.
using Implementations = core::ImplList<WarpRows, Blocked, Naive>;

struct Op {
  static constexpr const char* name = kOpName;
  using Implementations = layernorm_backward::Implementations;
  using Precisions = layernorm_backward::Precisions;
  using Sizes = layernorm_backward::Sizes;
  using Info = LayernormBackwardImplInfo;

  // dout, inp and dinp rows are C wide; weight (C) is not indexed by rows.
  static core::op::SizeLimits limits(const Sizes& s) {
    return {s.C, {{"C", s.C}}, {"C (weight's elements)", s.C}};
  }

  static bool is_empty(const Sizes& s) { return s.M == 0 || s.C == 0; }

  // No rows: the column sums are empty; overwritten ones are set to zeros.
  template <class ExecSpace, class P>
  static void empty_workspace(core::WorkspaceSize&, const Sizes&) {}
  template <class ExecSpace, class P>
  static void run_empty(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    if (p.args.overwrite_dweight) core::op::fill_zero(call.exec, p.args.dweight);
    if (p.args.overwrite_dbias) core::op::fill_zero(call.exec, p.args.dbias);
  }

  template <class I>
  static void describe(Info&) {}
};

}  // namespace llmk::op::layernorm_backward
