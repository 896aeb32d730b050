// The layer-norm backward as the shared framework sees it (core/op/): its
// declaration (spec.hpp), its implementations in the order "auto" prefers
// them, the limits its sizes meet, what a call without rows still writes,
// and its typed problem.
#pragma once

#include <core/op/call.hpp>
#include <core/op/entry.hpp>
#include <core/op/typed.hpp>
#include <core/registry.hpp>
#include <ops/layernorm_backward/blocked.hpp>
#include <ops/layernorm_backward/naive.hpp>
#include <ops/layernorm_backward/warp_rows.hpp>

namespace llmk::op::layernorm_backward {

struct Op : Spec, core::op::OpDefaults {
  // "warp_rows" streams the rows through shared memory on Cuda (falling back
  // to "blocked" where it cannot); "blocked" reads dout and inp once and
  // coalesced; "naive" is the baseline.
  using Implementations = core::ImplList<WarpRows, Blocked, Naive>;
  using Sizes = layernorm_backward::Sizes;

  // dout, inp and dinp rows are C wide; weight (C) is not indexed by rows.
  static core::op::SizeLimits limits(const Sizes& s) {
    return {s.C, {{"C", s.C}}, {"C (weight's elements)", s.C}};
  }

  static bool is_empty(const Sizes& s) { return s.M == 0 || s.C == 0; }

  // No rows: the column sums are empty; overwritten ones are set to zeros.
  template <class ExecSpace, class P>
  static void run_empty(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    if (p.args.overwrite_dweight) core::op::fill_zero(call.exec, p.args.dweight);
    if (p.args.overwrite_dbias) core::op::fill_zero(call.exec, p.args.dbias);
  }

  template <class ExecSpace, class P, class Bound>
  static Problem<ExecSpace, P> problem(const Bound& b, const Options& options) {
    using In = const typename P::in;
    const index_t M = b.rows(), C = b["C"];
    Problem<ExecSpace, P> p;
    auto& a = p.args;
    a.dinp = b.template matrix<typename P::dinp>(dinp, M, C);
    a.dweight = b.template vector<typename P::dweight>(dweight);
    a.dbias = b.template vector<typename P::dbias>(dbias);
    a.dout = b.template matrix<In>(dout, M, C);
    a.inp = b.template matrix<In>(inp, M, C);
    a.weight = b.template vector<In>(weight);
    a.mean = b.template vector<const float>(mean);
    a.rstd = b.template vector<const float>(rstd);
    a.overwrite_dinp = options.dinp_update == Update::overwrite;
    a.overwrite_dweight = options.dweight_update == Update::overwrite;
    a.overwrite_dbias = options.dbias_update == Update::overwrite;
    p.M = M, p.C = C;
    return p;
  }
};

}  // namespace llmk::op::layernorm_backward
