// The GELU forward as the shared framework sees it (core/op/): its
// declaration (spec.hpp), its typed problem, its implementations in the
// order "auto" prefers them, the limits its sizes meet.
#pragma once

#include <core/op/call.hpp>
#include <core/op/entry.hpp>
#include <core/op/impl_traits.hpp>
#include <core/registry.hpp>
#include <ops/gelu_forward/kernels.hpp>
#include <ops/gelu_forward/spec.hpp>

namespace llmk::op::gelu_forward {

// M rows of C (a flat call: M = N, C = 1); the kernels see N = M·C elements.
struct Sizes {
  index_t M = 0, C = 0;
};

template <class ExecSpace, class P = Fp32>
struct Problem {
  using precision = P;
  Args<ExecSpace, typename P::in, typename P::out> args;
  index_t M = 0, C = 0;

  Sizes sizes() const { return {M, C}; }
  // Rows [m0, m0 + count): elements [m0·C, (m0 + count)·C).
  Problem rows(index_t m0, index_t count) const {
    const std::pair<index_t, index_t> r(m0 * C, (m0 + count) * C);
    Problem p = *this;
    p.args.out = Kokkos::subview(args.out, r);
    p.args.inp = Kokkos::subview(args.inp, r);
    p.M = count;
    return p;
  }
};

template <class ExecSpace>
using Call = core::op::Call<ExecSpace, GeluForwardOptions>;

// Every implementation runs every precision and needs no workspace.
using ImplDefaults = core::op::AnyPrecisionNoWorkspace;

// "packed": 16 bytes a load on a GPU, vectorized blocks on a host.
struct Packed : ImplDefaults {
  static constexpr std::string_view name = "packed";
  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    gelu_forward_packed(call.exec, p.args);
  }
};

// "naive": a thread per element, the baseline.
struct Naive : ImplDefaults {
  static constexpr std::string_view name = "naive";
  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    gelu_forward_elements(call.exec, p.args);
  }
};

// An empty problem writes nothing (core::op::OpDefaults).
struct Op : Spec, core::op::OpDefaults {
  using Implementations = core::ImplList<Packed, Naive>;
  using Sizes = gelu_forward::Sizes;

  static core::op::SizeLimits limits(const Sizes& s) { return {s.C, {}, {"N", 0}}; }
  static bool is_empty(const Sizes& s) { return s.M == 0 || s.C == 0; }

  template <class ExecSpace, class P, class Bound>
  static Problem<ExecSpace, P> problem(const Bound& b, const Options& options) {
    Problem<ExecSpace, P> p;
    p.args.out = b.template vector<typename P::out>(out);
    p.args.inp = b.template vector<const typename P::in>(inp);
    p.args.overwrite_out = options.out_update == Update::overwrite;
    p.M = b.rows(), p.C = b["C"];
    return p;
  }
};

}  // namespace llmk::op::gelu_forward
