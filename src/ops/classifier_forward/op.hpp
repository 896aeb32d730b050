// The classifier forward as the shared framework sees it (core/op/): its
// declaration (spec.hpp), its problem, V's check, the targets' check, and its
// implementations, classifier_backward's kernels (its ClassifierArgs without
// dlogits: the losses alone):
//   "fused"  a team per row on a GPU (16-byte loads where the rows are
//            aligned), its max and sum in one online pass, the row read once;
//            a thread per row in vectorized passes on a host;
//   "naive"  a thread per row, the baseline.
#pragma once

#include <core/op/call.hpp>
#include <core/op/entry.hpp>
#include <core/op/impl_traits.hpp>
#include <core/registry.hpp>
#include <ops/classifier_backward/common.hpp>
#include <ops/classifier_backward/problem.hpp>
#include <ops/classifier_forward/spec.hpp>


namespace llmk::op::classifier_forward {

using Sizes = classifier_backward::Sizes;  // M, V, Vp

template <class ExecSpace, class P = Fp32>
struct Problem {
  using precision = P;
  using Args = kernels::ClassifierArgs<ExecSpace, typename P::in>;
  Args args;  // dlogits empty
  index_t M = 0, Vp = 0;

  Sizes sizes() const { return {M, index_t(args.V), Vp}; }
  Problem rows(index_t m0, index_t count) const {
    const std::pair<index_t, index_t> r(m0, m0 + count);
    Problem p = *this;
    p.args.logits = Kokkos::subview(args.logits, r, Kokkos::ALL);
    p.args.targets = Kokkos::subview(args.targets, r);
    p.args.losses = Kokkos::subview(args.losses, r);
    p.M = count;
    return p;
  }
};

template <class ExecSpace>
using Call = core::op::Call<ExecSpace, ClassifierForwardOptions>;

struct Fused : core::op::AnyPrecisionNoWorkspace {
  static constexpr std::string_view name = "fused";
  // classifier_backward's fused kernel's limits (ops/classifier_backward/fused.hpp).
  static constexpr index_t max_rows = core::kInt32Max;
  static constexpr index_t max_cols = core::kInt32Max / 2;
  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    kernels::run_classifier_rows(call.exec, p.args);
  }
};

struct Naive : core::op::AnyPrecisionNoWorkspace {
  static constexpr std::string_view name = "naive";
  static constexpr index_t max_cols = core::kInt32Max;
  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    kernels::classifier_rows_naive(call.exec, p.args);
  }
};

using Implementations = core::ImplList<Fused, Naive>;

struct Op : Spec, core::op::OpDefaults {
  using Implementations = classifier_forward::Implementations;
  using Sizes = classifier_forward::Sizes;

  static core::op::SizeLimits limits(const Sizes& s) { return {s.Vp, {{"Vp", s.Vp}}, {"", 0}}; }
  static bool is_empty(const Sizes& s) { return s.M == 0; }

  // V: 1 to Vp columns (0 only without rows), as classifier_backward's.
  template <class Bound>
  static void check(const Bound& b, index_t V) {
    classifier::check_vocabulary(name, V, b["Vp"], b.rows());
  }

  template <class ExecSpace, class P, class Bound>
  static Problem<ExecSpace, P> problem(const Bound& b, const Options&, index_t V) {
    const index_t M = b.rows(), Vp = b["Vp"];
    Problem<ExecSpace, P> p;
    p.args.logits = b.template matrix<const typename P::in>(logits, M, Vp);
    p.args.losses = b.template vector<float>(losses);
    p.args.targets = b.template vector<const std::int32_t>(targets);
    p.args.V = int(V);  // ≤ Vp, which the implementations' max_cols bound
    p.M = M, p.Vp = Vp;
    return p;
  }

  // The targets' check (options.check_targets), before the first write.
  template <class ExecSpace, class P>
  static void before_run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    if (call.options.check_targets)
      classifier::refuse_bad_targets(call.exec, p.args.targets, p.args.V, name);
  }
};

}  // namespace llmk::op::classifier_forward
