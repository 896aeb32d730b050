// An elementwise operation from its declaration and the function of its
// elements: out ⟵ F(inputs) element by element (GELU, the residual's sum).
// The operation's op.hpp is then
//
//   struct Op : core::op::ElementwiseOp<Spec, MyFunction> {};
//
// where Spec declares out first and then one or two inputs, all "rows C" of
// the precision's roles (P::out, P::in), and Options holds `impl` and
// `out_update`; MyFunction is a functor of floats with the labels of its two
// kernels (kernels/elementwise.hpp's maps):
//
//   struct MyFunction {
//     static constexpr const char* packed_label = "llmk::my_op_packed";
//     static constexpr const char* elements_label = "llmk::my_op_elements";
//     KOKKOS_INLINE_FUNCTION float operator()(float a[, float b]) const;
//   };
//
// Its implementations, in the order "auto" prefers them: "packed" (16-byte
// packs on a GPU, vectorized blocks on a host) and "naive" (a thread per
// element). Every precision, no workspace; chunks are rows of C elements.
#pragma once

#include <core/op/call.hpp>
#include <core/op/entry.hpp>
#include <core/op/impl_traits.hpp>
#include <core/registry.hpp>
#include <kernels/elementwise.hpp>

#include <array>
#include <string_view>
#include <utility>

namespace llmk::core::op {

// M rows of C (a flat call: M = N, C = 1); the kernels see N = M·C elements.
struct ElementwiseSizes {
  index_t M = 0, C = 0;
};

template <class ExecSpace, class P, std::size_t Inputs>
struct ElementwiseProblem {
  using precision = P;
  template <class T>
  using Vector = Kokkos::View<T*, Kokkos::LayoutRight, typename ExecSpace::device_type,
                              Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Vector<typename P::out> out;
  std::array<Vector<const typename P::in>, Inputs> in;
  bool overwrite_out = true;
  index_t M = 0, C = 0;

  ElementwiseSizes sizes() const { return {M, C}; }
  // Rows [m0, m0 + count): elements [m0·C, (m0 + count)·C).
  ElementwiseProblem rows(index_t m0, index_t count) const {
    const std::pair<index_t, index_t> r(m0 * C, (m0 + count) * C);
    ElementwiseProblem p = *this;
    p.out = Kokkos::subview(out, r);
    for (std::size_t i = 0; i < Inputs; ++i) p.in[i] = Kokkos::subview(in[i], r);
    p.M = count;
    return p;
  }
  // The maps' arrays: out may be in[0] (in place), read before it is written.
  auto arrays() const {
    const index_t n = index_t(out.extent(0));
    if constexpr (Inputs == 1) {
      return kernels::map_arrays(out.data(), in[0].data(), n, overwrite_out);
    } else {
      static_assert(Inputs == 2, "one or two inputs");
      return kernels::map_arrays(out.data(), in[0].data(), in[1].data(), n, overwrite_out);
    }
  }
};

// "packed": 16 bytes a load on a GPU, vectorized blocks on a host.
template <class F>
struct ElementwisePacked : AnyPrecisionNoWorkspace {
  static constexpr std::string_view name = "packed";
  template <class ExecSpace, class Options, class Problem>
  static void run(Call<ExecSpace, Options>& call, const Problem& p) {
    kernels::map_packed(F::packed_label, call.exec, F{}, p.arrays());
  }
};

// "naive": a thread per element, the baseline.
template <class F>
struct ElementwiseNaive : AnyPrecisionNoWorkspace {
  static constexpr std::string_view name = "naive";
  template <class ExecSpace, class Options, class Problem>
  static void run(Call<ExecSpace, Options>& call, const Problem& p) {
    kernels::map_elements(F::elements_label, call.exec, F{}, p.arrays());
  }
};

// An empty problem writes nothing (OpDefaults).
template <class Spec, class F>
struct ElementwiseOp : Spec, OpDefaults {
  static constexpr std::size_t inputs = Spec::args.size() - 1;
  static_assert(Spec::args[0].output() && !Spec::args[1].output(), "out first, then the inputs");
  using Implementations = core::ImplList<ElementwisePacked<F>, ElementwiseNaive<F>>;
  using Sizes = ElementwiseSizes;
  template <class ExecSpace, class P>
  using Problem = ElementwiseProblem<ExecSpace, P, inputs>;

  static SizeLimits limits(const Sizes& s) { return {s.C, {}, {"N", 0}}; }
  static bool is_empty(const Sizes& s) { return s.M == 0 || s.C == 0; }

  template <class ExecSpace, class P, class Bound>
  static Problem<ExecSpace, P> problem(const Bound& b, const typename Spec::Options& options) {
    Problem<ExecSpace, P> p;
    p.out = b.template vector<typename P::out>(0);
    for (std::size_t i = 0; i < inputs; ++i)
      p.in[i] = b.template vector<const typename P::in>(1 + i);
    p.overwrite_out = options.out_update == Update::overwrite;
    p.M = b.rows(), p.C = b["C"];
    return p;
  }
};

}  // namespace llmk::core::op
