// Implementation "tiled": both products through the hierarchical Kokkos GEMM
// (kernels/gemm_tiled.hpp), every precision; overwrite, GELU's factor and the
// rounding into bf16 are the GEMM's epilogue (no zero-fill, no elementwise
// pass over dinp or dweight); dbias summed by the dweight kernel from the dout
// it stages (TiledTuning::fuse_bias), or by column_sums after it.
#pragma once

#include <kernels/gemm_tiled.hpp>
#include <ops/matmul_backward/problem.hpp>

namespace llmk::op::matmul_backward {

struct Tiled : ImplDefaults {
  static constexpr std::string_view name = "tiled";
  static constexpr BiasPass bias = BiasPass::Fused;
  // The league is a team per tile; Kokkos 3 counts it in int. Chunks of
  // 2³¹ − 1 rows keep it there for any problem that fits in memory.
  static constexpr index_t max_rows = core::kInt32Max;
  template <class P>
  static constexpr bool supports = true;
  static constexpr bool fused_gelu = true;

  template <class ExecSpace, class P>
  static void workspace(core::WorkspaceSize& size, const Sizes& s) {
    if (s.bias && !kernels::TiledTuning<ExecSpace>::fuse_bias)
      add_bias_pass_workspace<ExecSpace>(size, BiasPass::ColumnSums, s.M, s.OC);
  }

  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    run(call, p, kernels::TiledTuning<ExecSpace>::fuse_bias);
  }

  // fuse_bias = false: the dweight kernel, then column_sums (kept to measure
  // the two against each other).
  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p, const bool fuse_bias) {
    using In = typename P::in;
    using DWeight = typename P::dweight;
    kernels::TiledGemm<false, false, ExecSpace, In, typename P::dinp>(p.dinp, p.dout, p.weight,
                                                                      p.overwrite_dinp)
        .with_gelu(p.pre_gelu)
        .run(call.exec, "llmk::dinp_tiled");
    if (p.has_bias() && fuse_bias) {
      kernels::TiledGemm<true, true, ExecSpace, In, DWeight, typename P::dbias>(
          p.dweight, p.dout, p.inp, p.overwrite_dweight)
          .with_bias(p.dbias, p.overwrite_dbias)
          .run(call.exec, "llmk::dweight_dbias_tiled");
    } else {
      kernels::TiledGemm<true, false, ExecSpace, In, DWeight>(p.dweight, p.dout, p.inp,
                                                              p.overwrite_dweight)
          .run(call.exec, "llmk::dweight_tiled");
      if (p.has_bias()) run_bias_pass(BiasPass::ColumnSums, call, p);
    }
  }
};

}  // namespace llmk::op::matmul_backward
