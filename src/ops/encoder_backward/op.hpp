// The encoder backward as the shared framework sees it (core/op/): its
// declaration (spec.hpp), implementations, limits, empty calls and typed
// problem.
#pragma once

#include <core/op/call.hpp>
#include <core/op/entry.hpp>
#include <core/op/typed.hpp>
#include <core/registry.hpp>
#include <ops/encoder_backward/block_sort.hpp>
#include <ops/encoder_backward/sorted.hpp>

namespace llmk::op::encoder_backward {

struct Op : Spec, core::op::OpDefaults {
  // "auto" takes the first that runs on the space: block_sort on Cuda.
  using Implementations = core::ImplList<BlockSort, Sorted>;
  using Sizes = encoder_backward::Sizes;

  // dout's rows are C wide; the positions (B·T) are what an implementation
  // bounds; dwte (V × C) is the array not indexed by rows.
  static core::op::SizeLimits limits(const Sizes& s) {
    return {s.C, {{"B·T (positions)", s.M}}, {"V·C (dwte's elements)", s.V * s.C}};
  }

  static bool is_empty(const Sizes& s) { return s.M == 0 || s.C == 0; }

  // No positions or no channels: the tokens are still checked; overwritten
  // outputs become zeros.
  template <class ExecSpace, class P>
  static void run_empty(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    if (p.M > 0 && p.args.check_tokens) check_tokens(call.exec, p);
    if (p.args.overwrite_dwte) core::op::fill_zero(call.exec, p.args.dwte);
    if (p.args.overwrite_dwpe) core::op::fill_zero(call.exec, p.args.dwpe);
  }

  template <class ExecSpace, class P, class Bound>
  static Problem<ExecSpace, P> problem(const Bound& b, const Options& options) {
    const index_t B = b["B"], T = b["T"], C = b["C"], V = b["V"], M = B * T;
    Problem<ExecSpace, P> p;
    auto& a = p.args;
    a.dwte = b.template matrix<typename P::dwte>(dwte, V, C);
    a.dwpe = b.template matrix<typename P::dwpe>(dwpe, T, C);
    a.dout = b.template matrix<const typename P::in>(dout, M, C);
    a.tokens = decltype(a.tokens)(b.template data<const int>(tokens), M);
    a.B = B, a.T = T;
    a.overwrite_dwte = options.dwte_update == Update::overwrite;
    a.overwrite_dwpe = options.dwpe_update == Update::overwrite;
    a.check_tokens = options.check_tokens;
    p.M = M, p.C = C;
    return p;
  }
};

}  // namespace llmk::op::encoder_backward
