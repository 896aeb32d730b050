// The GELU backward as an operation of llmk: what every implementation
// receives (a validated Problem and a Call) and what it declares about itself
// (core/op/impl_traits.hpp).
#pragma once

#include <core/op/call.hpp>
#include <core/op/impl_traits.hpp>
#include <ops/gelu_backward/kernels.hpp>
#include <llmk/gelu_backward.hpp>
#include <ops/gelu_backward/spec.hpp>

namespace llmk::op::gelu_backward {

inline constexpr const char* kOpName = Spec::name;

// The sizes of a call: M rows of C (a flat call: M = N, C = 1; the rows only
// matter to the framework's chunks, the kernels see N = M·C elements).
struct Sizes {
  index_t M = 0, C = 0;
};

// Validated flat views of one precision configuration P, and dinp's update.
template <class ExecSpace, class P = Fp32>
struct Problem {
  using precision = P;
  using Args = kernels::GeluBackwardArgs<ExecSpace, typename P::in, typename P::dinp>;
  Args args;  // dinp, dout, inp (N elements each); overwrite_dinp
  index_t M = 0, C = 0;

  Sizes sizes() const { return {M, C}; }

  // Rows [m0, m0 + count): elements [m0·C, (m0 + count)·C).
  Problem rows(index_t m0, index_t count) const {
    const std::pair<index_t, index_t> r(m0 * C, (m0 + count) * C);
    Problem p = *this;
    p.args.dinp = Kokkos::subview(args.dinp, r);
    p.args.dout = Kokkos::subview(args.dout, r);
    p.args.inp = Kokkos::subview(args.inp, r);
    p.M = count;
    return p;
  }
};

template <class ExecSpace>
using Call = core::op::Call<ExecSpace, GeluBackwardOptions>;

// Every implementation runs every precision (its kernels are templates on
// the element types) and needs no workspace.
using ImplDefaults = core::op::AnyPrecisionNoWorkspace;

}  // namespace llmk::op::gelu_backward
