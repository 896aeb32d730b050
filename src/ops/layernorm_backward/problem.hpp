// The layer-norm backward as an operation of llmk: what every implementation
// receives (a validated Problem and a Call) and what it declares about itself
// (core/op/impl_traits.hpp).
#pragma once

#include <core/op/call.hpp>
#include <core/op/impl_traits.hpp>
#include <ops/layernorm_backward/kernels.hpp>
#include <llmk/layernorm_backward.hpp>
#include <ops/layernorm_backward/spec.hpp>

namespace llmk::op::layernorm_backward {

inline constexpr const char* kOpName = Spec::name;

// The sizes of a call, all that decides the workspace it needs.
struct Sizes {
  index_t M = 0, C = 0;
  bool bias = false;
};

// Validated views of one precision configuration P, and what each gradient
// receives.
template <class ExecSpace, class P = Fp32>
struct Problem {
  using precision = P;
  using Args = kernels::LayernormArgs<ExecSpace, typename P::in, typename P::dinp,
                                      typename P::dweight, typename P::dbias>;
  Args args;  // dinp, dweight, dbias, dout, inp, weight, mean, rstd; the updates
  index_t M = 0, C = 0;

  bool has_bias() const { return args.dbias.extent(0) != 0; }
  Sizes sizes() const { return {M, C, has_bias()}; }

  // Rows [m0, m0 + count), with the same dweight and dbias: chunks after the
  // first accumulate into an overwritten dweight and dbias.
  Problem rows(index_t m0, index_t count) const {
    const std::pair<index_t, index_t> r(m0, m0 + count);
    Problem p = *this;
    p.args.dinp = Kokkos::subview(args.dinp, r, Kokkos::ALL);
    p.args.dout = Kokkos::subview(args.dout, r, Kokkos::ALL);
    p.args.inp = Kokkos::subview(args.inp, r, Kokkos::ALL);
    p.args.mean = Kokkos::subview(args.mean, r);
    p.args.rstd = Kokkos::subview(args.rstd, r);
    p.M = count;
    if (m0 > 0) p.args.overwrite_dweight = p.args.overwrite_dbias = false;
    return p;
  }
};

template <class ExecSpace>
using Call = core::op::Call<ExecSpace, LayernormBackwardOptions>;

// Every implementation runs every precision (its kernels are templates on
// the element types).
struct ImplDefaults : core::op::ImplDefaults {
  template <class P>
  static constexpr bool supports = true;
};

}  // namespace llmk::op::layernorm_backward
