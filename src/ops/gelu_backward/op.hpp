// The GELU backward as the shared framework sees it (core/op/): its
// declaration (spec.hpp), its implementations in the order "auto" prefers
// them, the limits its sizes meet, what a call without elements still
// writes, and its typed problem.
#pragma once

#include <core/op/call.hpp>
#include <core/op/entry.hpp>
#include <core/registry.hpp>
#include <ops/gelu_backward/naive.hpp>
#include <ops/gelu_backward/packed.hpp>

namespace llmk::op::gelu_backward {

struct Op : Spec, core::op::OpDefaults {
  // "packed" moves 16 bytes a load; "naive" is the baseline.
  using Implementations = core::ImplList<Packed, Naive>;
  using Sizes = gelu_backward::Sizes;

  // Rows of C elements; no array that is not indexed by rows.
  static core::op::SizeLimits limits(const Sizes& s) { return {s.C, {}, {"N", 0}}; }

  static bool is_empty(const Sizes& s) { return s.M == 0 || s.C == 0; }

  // The kernels see N = M·C elements.
  template <class ExecSpace, class P, class Bound>
  static Problem<ExecSpace, P> problem(const Bound& b, const Options& options) {
    Problem<ExecSpace, P> p;
    p.args.dinp = b.template vector<typename P::dinp>(dinp);
    p.args.dout = b.template vector<const typename P::in>(dout);
    p.args.inp = b.template vector<const typename P::in>(inp);
    p.args.overwrite_dinp = options.dinp_update == Update::overwrite;
    p.M = b.rows(), p.C = b["C"];
    return p;
  }
};

}  // namespace llmk::op::gelu_backward
