// Implementation "tiled": both products through the hierarchical Kokkos GEMM
// (kernels/gemm_tiled.hpp); dbias summed by the dweight kernel from the dout
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

  template <class ExecSpace>
  static void workspace(core::WorkspaceSize& size, const Sizes& s) {
    if (s.bias && !kernels::TiledTuning<ExecSpace>::fuse_bias)
      add_bias_pass_workspace<ExecSpace>(size, BiasPass::ColumnSums, s.M, s.OC);
  }

  template <class ExecSpace>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace>& p) {
    run(call, p, kernels::TiledTuning<ExecSpace>::fuse_bias);
  }

  // fuse_bias = false: the dweight kernel, then column_sums (kept to measure
  // the two against each other).
  template <class ExecSpace>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace>& p, const bool fuse_bias) {
    using kernels::TiledGemm;
    TiledGemm<false, false, ExecSpace>(p.dinp, p.dout, p.weight).run(call.exec, "llmk::dinp_tiled");
    if (p.has_bias() && fuse_bias) {
      TiledGemm<true, true, ExecSpace>(p.dweight, p.dout, p.inp, p.dbias)
          .run(call.exec, "llmk::dweight_dbias_tiled");
    } else {
      TiledGemm<true, false, ExecSpace>(p.dweight, p.dout, p.inp)
          .run(call.exec, "llmk::dweight_tiled");
      if (p.has_bias()) run_bias_pass(BiasPass::ColumnSums, call, p.dbias, p.dout);
    }
  }
};

}  // namespace llmk::op::matmul_backward
