// The layer-norm forward as the shared framework sees it (core/op/): its
// declaration (spec.hpp), its typed problem, its implementations in the
// order "auto" prefers them, the limits its sizes meet.
#pragma once

#include <core/op/call.hpp>
#include <core/op/entry.hpp>
#include <core/op/impl_traits.hpp>
#include <core/registry.hpp>
#include <ops/layernorm_forward/kernels.hpp>
#include <ops/layernorm_forward/spec.hpp>
#include <ops/layernorm_forward/warp_rows.hpp>

namespace llmk::op::layernorm_forward {

struct Sizes {
  index_t M = 0, C = 0;
};

template <class ExecSpace, class P = Fp32>
struct Problem {
  using precision = P;
  Args<ExecSpace, typename P::in, typename P::out> args;
  index_t M = 0, C = 0;

  Sizes sizes() const { return {M, C}; }
  Problem rows(index_t m0, index_t count) const {
    const std::pair<index_t, index_t> r(m0, m0 + count);
    Problem p = *this;
    p.args.out = Kokkos::subview(args.out, r, Kokkos::ALL);
    p.args.inp = Kokkos::subview(args.inp, r, Kokkos::ALL);
    p.args.mean = Kokkos::subview(args.mean, r);
    p.args.rstd = Kokkos::subview(args.rstd, r);
    p.M = count;
    return p;
  }
};

template <class ExecSpace>
using Call = core::op::Call<ExecSpace, LayernormForwardOptions>;

using ImplDefaults = core::op::AnyPrecisionNoWorkspace;

// "rows": a warp per row on a GPU, vectorized passes on a host.
struct Rows : ImplDefaults {
  static constexpr std::string_view name = "rows";
  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    layernorm_forward_rows(call.exec, p.args);
  }
};

// "warp_rows": a warp a row held in registers, on Cuda (warp_rows.hpp);
// "rows" where the kernel does not take the call.
struct WarpRows : core::op::OnCuda<ImplDefaults, LLMK_HAVE_CUDA> {
  static constexpr std::string_view name = "warp_rows";
  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    if (!warp_rows_run(call.exec, p.args)) layernorm_forward_rows(call.exec, p.args);
  }
};

// "naive": a thread per row, the baseline.
struct Naive : ImplDefaults {
  static constexpr std::string_view name = "naive";
  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    layernorm_forward_naive(call.exec, p.args);
  }
};

struct Op : Spec, core::op::OpDefaults {
  using Implementations = core::ImplList<WarpRows, Rows, Naive>;
  using Sizes = layernorm_forward::Sizes;

  // inp and out rows are C wide; weight and bias (C) are not indexed by rows.
  static core::op::SizeLimits limits(const Sizes& s) {
    return {s.C, {{"C", s.C}}, {"C (weight's elements)", s.C}};
  }
  // No rows: nothing to write (rows of no columns still get mean and rstd).
  static bool is_empty(const Sizes& s) { return s.M == 0; }

  template <class ExecSpace, class P, class Bound>
  static Problem<ExecSpace, P> problem(const Bound& b, const Options& options) {
    using In = const typename P::in;
    Problem<ExecSpace, P> p;
    const index_t M = b.rows(), C = b["C"];
    auto& a = p.args;
    a.out = b.template matrix<typename P::out>(out, M, C);
    a.mean = b.template vector<float>(mean);
    a.rstd = b.template vector<float>(rstd);
    a.inp = b.template matrix<In>(inp, M, C);
    a.weight = b.template vector<In>(weight);
    a.bias = b.template vector<In>(bias);
    a.eps = options.eps;
    a.overwrite_out = options.out_update == Update::overwrite;
    p.M = M, p.C = C;
    return p;
  }
};

}  // namespace llmk::op::layernorm_forward
