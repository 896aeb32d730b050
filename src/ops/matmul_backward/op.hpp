// The matmul backward as the shared framework sees it (core/op/: the list
// walk, "auto", calls with a context, chunks, queries): its declaration
// (spec.hpp), its implementations in the order "auto" prefers them, the
// limits its sizes meet, what a call without products still writes, and its
// typed problem.
#pragma once

#include <core/op/call.hpp>
#include <core/op/entry.hpp>
#include <core/op/select.hpp>
#include <core/op/typed.hpp>
#include <ops/matmul_backward/implementations.hpp>

namespace llmk::op::matmul_backward {

struct Op : Spec {
  using Implementations = matmul_backward::Implementations;
  using Sizes = matmul_backward::Sizes;
  using Info = MatmulBackwardImplInfo;

  // dout rows are OC wide, inp and dinp rows C; C and OC are columns; weight
  // (OC·C) is the one array not indexed by rows.
  static core::op::SizeLimits limits(const Sizes& s) {
    return {std::max(s.C, s.OC),
            {{"C", s.C}, {"OC", s.OC}},
            {"OC·C (weight's elements)", s.OC * s.C}};
  }

  static bool is_empty(const Sizes& s) { return s.M == 0 || s.C == 0 || s.OC == 0; }

  // Without products the sums are empty but dbias's when only C is zero; an
  // overwritten gradient is set to zeros.
  template <class ExecSpace, class P>
  static void empty_workspace(core::WorkspaceSize& size, const Sizes& s) {
    if (s.bias && s.M > 0 && s.OC > 0)
      add_bias_pass_workspace<ExecSpace>(size, BiasPass::ColumnSums, s.M, s.OC);
  }
  template <class ExecSpace, class P>
  static void run_empty(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    if (p.overwrite_dinp) core::op::fill_zero(call.exec, p.dinp);
    if (p.overwrite_dweight) core::op::fill_zero(call.exec, p.dweight);
    if (!p.has_bias()) return;
    if (p.M > 0 && p.OC > 0) {
      run_bias_pass(BiasPass::ColumnSums, call, p);
    } else if (p.overwrite_dbias) {
      core::op::fill_zero(call.exec, p.dbias);
    }
  }

  template <class I>
  static void describe(Info& info) {
    info.dbias = std::string(bias_pass_name(I::bias));
    info.gelu = I::fused_gelu ? "fused" : "separate";
  }

  // The bound call as rank-2 matrices (an absent dbias or pre_gelu empty).
  template <class ExecSpace, class P, class Bound>
  static Problem<ExecSpace, P> problem(const Bound& b, const Options& options) {
    using In = const typename P::in;
    const index_t M = b.rows(), C = b["C"], OC = b["OC"];
    Problem<ExecSpace, P> p;
    p.dinp = b.template matrix<typename P::dinp>(dinp, M, C);
    p.dweight = b.template matrix<typename P::dweight>(dweight, OC, C);
    p.dbias = b.template vector<typename P::dbias>(dbias);
    p.dout = b.template matrix<In>(dout, M, OC);
    p.inp = b.template matrix<In>(inp, M, C);
    p.weight = b.template matrix<In>(weight, OC, C);
    p.pre_gelu = b.template matrix<In>(pre_gelu, M, C);
    p.M = M, p.C = C, p.OC = OC;
    p.overwrite_dinp = options.dinp_update == Update::overwrite;
    p.overwrite_dweight = options.dweight_update == Update::overwrite;
    p.overwrite_dbias = options.dbias_update == Update::overwrite;
    return p;
  }
  // The math mode a call asks for (Math::tf32: TF32 products on Cuda).
  static Math math(const Options& options) { return options.math; }
};

}  // namespace llmk::op::matmul_backward
