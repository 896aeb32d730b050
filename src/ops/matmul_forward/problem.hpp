// The matmul forward as an operation of llmk: what every implementation
// receives (a validated Problem and a Call) and the traits it declares.
#pragma once

#include <core/op/call.hpp>
#include <core/op/impl_traits.hpp>
#include <ops/matmul_forward/spec.hpp>

#include <utility>

namespace llmk::op::matmul_forward {

struct Sizes {
  index_t M = 0, C = 0, OC = 0;
  bool gelu = false;
};

// Rank-2 views of one precision P: out, pre_gelu (empty: no GELU) M × OC,
// inp M × C, weight OC × C, bias OC (empty: none).
template <class ExecSpace, class P = Fp32>
struct Problem {
  using precision = P;
  using In = typename P::in;
  Matrix<ExecSpace, typename P::out> out, pre_gelu;
  ConstMatrix<ExecSpace, In> inp, weight;
  ConstVector<ExecSpace, In> bias;
  index_t M = 0, C = 0, OC = 0;
  bool overwrite_out = true;

  bool has_bias() const { return bias.extent(0) != 0; }
  bool has_gelu() const { return pre_gelu.extent(0) != 0; }
  Sizes sizes() const { return {M, C, OC, has_gelu()}; }
  // Rows [m0, m0 + count) of inp, out and pre_gelu, with the same weight.
  Problem rows(index_t m0, index_t count) const {
    const std::pair<index_t, index_t> r(m0, m0 + count);
    Problem p = *this;
    p.out = Kokkos::subview(out, r, Kokkos::ALL);
    p.inp = Kokkos::subview(inp, r, Kokkos::ALL);
    if (has_gelu()) p.pre_gelu = Kokkos::subview(pre_gelu, r, Kokkos::ALL);
    p.M = count;
    return p;
  }
};

template <class ExecSpace>
using Call = core::op::Call<ExecSpace, MatmulForwardOptions>;

// Every implementation runs both precisions.
struct ImplDefaults : core::op::ImplDefaults {
  template <class P>
  static constexpr bool supports = true;
};

}  // namespace llmk::op::matmul_forward
