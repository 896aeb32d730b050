// The classifier backward as the shared framework sees it (core/op/): its
// declaration (spec.hpp), its implementations in the order "auto" prefers
// them, the limits its sizes meet, what a call without rows still writes, its
// scalars' check, its typed problem and the targets' check.
#pragma once

#include <core/op/call.hpp>
#include <core/op/entry.hpp>
#include <core/op/typed.hpp>
#include <core/registry.hpp>
#include <ops/classifier_backward/common.hpp>
#include <ops/classifier_backward/fused.hpp>
#include <ops/classifier_backward/naive.hpp>
#include <ops/classifier_backward/row_in_shared.hpp>


namespace llmk::op::classifier_backward {

// "row_in_shared" reads a bf16 row once from memory on Cuda; "fused" reads
// it twice, the second time mostly from the cache; "naive" is the baseline.
using Implementations = core::ImplList<RowInShared, Fused, Naive>;

// The call's values that are no arrays: dloss for every position (where no
// dloss array is given) and the vocabulary V of the Vp columns.
struct Scalars {
  float dloss_value = 1.0f;
  index_t V = 0;
};

struct Op : Spec, core::op::OpDefaults {
  using Implementations = classifier_backward::Implementations;
  using Sizes = classifier_backward::Sizes;

  // logits and dlogits rows are Vp wide; no array is not indexed by rows.
  static core::op::SizeLimits limits(const Sizes& s) {
    return {s.Vp, {{"Vp", s.Vp}}, {"", 0}};
  }

  static bool is_empty(const Sizes& s) { return s.M == 0; }

  // V: 1 to Vp columns (0 only without rows).
  template <class Bound>
  static void check(const Bound& b, const Scalars& s) {
    classifier::check_vocabulary(name, s.V, b["Vp"], b.rows());
  }

  template <class ExecSpace, class P, class Bound>
  static Problem<ExecSpace, P> problem(const Bound& b, const Options&, const Scalars& s) {
    using T = typename P::in;
    const index_t M = b.rows(), Vp = b["Vp"];
    Problem<ExecSpace, P> p;
    auto& a = p.args;
    a.dlogits = b.template matrix<T>(dlogits, M, Vp);
    a.logits = b.template matrix<const T>(logits, M, Vp);
    a.losses = b.template vector<float>(losses);
    a.targets = b.template vector<const std::int32_t>(targets);
    a.dloss = b.template vector<const float>(dloss);
    a.dloss_value = s.dloss_value;
    a.V = int(s.V);  // ≤ Vp, which the implementations' max_cols bound
    p.M = M, p.Vp = Vp;
    return p;
  }

  // Refuses targets outside [0, V) (options.check_targets): a reduction over
  // them on the call's queue, whose count the host waits for; after
  // everything else that can fail, before the first write.
  template <class ExecSpace, class P>
  static void before_run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    if (call.options.check_targets)
      classifier::refuse_bad_targets(call.exec, p.args.targets, p.args.V, name);
  }
};

}  // namespace llmk::op::classifier_backward
