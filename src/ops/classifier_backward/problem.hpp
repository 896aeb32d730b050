// The classifier backward as an operation of llmk: what every implementation
// receives (a validated Problem and a Call) and what it declares about itself
// (core/op/impl_traits.hpp).
#pragma once

#include <core/op/call.hpp>
#include <core/op/impl_traits.hpp>
#include <ops/classifier_backward/kernels.hpp>
#include <llmk/classifier_backward.hpp>
#include <ops/classifier_backward/spec.hpp>

namespace llmk::op::classifier_backward {

inline constexpr const char* kOpName = Spec::name;

// The sizes of a call: rows, the vocabulary and the padded row.
struct Sizes {
  index_t M = 0, V = 0, Vp = 0;
};

// Validated views of one precision configuration P.
template <class ExecSpace, class P = Fp32>
struct Problem {
  using precision = P;
  using Args = kernels::ClassifierArgs<ExecSpace, typename P::in>;
  Args args;  // dlogits, logits, losses, targets, dloss, V
  index_t M = 0, Vp = 0;

  Sizes sizes() const { return {M, index_t(args.V), Vp}; }

  // Rows [m0, m0 + count).
  Problem rows(index_t m0, index_t count) const {
    const std::pair<index_t, index_t> r(m0, m0 + count);
    Problem p = *this;
    p.args.dlogits = Kokkos::subview(args.dlogits, r, Kokkos::ALL);
    p.args.logits = Kokkos::subview(args.logits, r, Kokkos::ALL);
    p.args.targets = Kokkos::subview(args.targets, r);
    if (args.losses.extent(0) != 0) p.args.losses = Kokkos::subview(args.losses, r);
    if (args.dloss.extent(0) != 0) p.args.dloss = Kokkos::subview(args.dloss, r);
    p.M = count;
    return p;
  }
};

template <class ExecSpace>
using Call = core::op::Call<ExecSpace, ClassifierBackwardOptions>;

// Every implementation runs both precisions (its kernels are templates on
// the element type).
struct ImplDefaults : core::op::ImplDefaults {
  template <class P>
  static constexpr bool supports = true;
};

}  // namespace llmk::op::classifier_backward
