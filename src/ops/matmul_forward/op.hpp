// The matmul forward as the shared framework sees it (core/op/): its
// declaration (spec.hpp), its implementations in the order "auto" prefers
// them, the limits its sizes meet, and its typed problem.
#pragma once

#include <core/op/entry.hpp>
#include <core/registry.hpp>
#include <ops/matmul_forward/cublas.hpp>
#include <ops/matmul_forward/kernels.hpp>
#include <ops/matmul_forward/kokkoskernels.hpp>

#include <algorithm>

namespace llmk::op::matmul_forward {

// "tiled": the hierarchical Kokkos GEMM (kernels/gemm_tiled.hpp), the bias
// and GELU in its epilogue.
struct Tiled : ImplDefaults {
  static constexpr std::string_view name = "tiled";
  // A league of a team per tile (and K range): int in Kokkos 3 (matmul_backward's "tiled").
  static constexpr index_t max_rows = core::kInt32Max;
  template <class ExecSpace, class P>
  static void workspace(core::WorkspaceSize& size, const Sizes& s) {
    size.add<float>(ForwardGemm<ExecSpace, P>::split_k_workspace(forward_shape(s), false));
  }
  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    const std::size_t floats =
        ForwardGemm<ExecSpace, P>::split_k_workspace(forward_shape(p.sizes()), false);
    matmul_forward_tiled(call.exec, p, call.workspace.template take<float>(floats));
  }
};

// "naive": a thread per output element, the baseline.
struct Naive : ImplDefaults {
  static constexpr std::string_view name = "naive";
  template <class ExecSpace, class P>
  static void workspace(core::WorkspaceSize&, const Sizes&) {}
  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    matmul_forward_naive(call.exec, p);
  }
};

struct Op : Spec, core::op::OpDefaults {
  // "auto": cuBLASLt on Cuda; on a host the BLAS where matmul_backward's
  // rule takes it (kokkoskernels' traits), else tiled.
  using Implementations = core::ImplList<CublasLt, KokkosKernels, Tiled, Naive>;
  using Sizes = matmul_forward::Sizes;

  // inp's rows are C wide, out's OC; weight (OC·C) is not indexed by rows.
  static core::op::SizeLimits limits(const Sizes& s) {
    return {std::max(s.C, s.OC),
            {{"C", s.C}, {"OC", s.OC}},
            {"OC·C (weight's elements)", s.OC * s.C}};
  }
  // C = 0 still writes out ⟵ bias (through GELU), which no GEMM takes: the
  // naive kernel's empty sums do it.
  static bool is_empty(const Sizes& s) { return s.M == 0 || s.OC == 0 || s.C == 0; }
  template <class ExecSpace, class P>
  static void run_empty(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    if (p.M > 0 && p.OC > 0) matmul_forward_naive(call.exec, p);
  }

  template <class ExecSpace, class P, class Bound>
  static Problem<ExecSpace, P> problem(const Bound& b, const Options& options) {
    using In = const typename P::in;
    const index_t M = b.rows(), C = b["C"], OC = b["OC"];
    Problem<ExecSpace, P> p;
    p.out = b.template matrix<typename P::out>(out, M, OC);
    p.pre_gelu = b.template matrix<typename P::out>(pre_gelu, M, OC);
    p.inp = b.template matrix<In>(inp, M, C);
    p.weight = b.template matrix<In>(weight, OC, C);
    p.bias = b.template vector<In>(bias);
    p.M = M, p.C = C, p.OC = OC;
    p.overwrite_out = options.out_update == Update::overwrite;
    return p;
  }
};

}  // namespace llmk::op::matmul_forward
