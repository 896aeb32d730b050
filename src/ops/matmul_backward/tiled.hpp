// Implementation "tiled": both products through the hierarchical Kokkos GEMM
// (kernels/gemm_tiled.hpp); dbias summed by the dweight kernel from the dout
// it stages (TiledTuning::fuse_bias), or by column_sums after it.
#pragma once

#include <kernels/gemm_output.hpp>
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
  using Output = kernels::GemmOutput<ExecSpace, float>;

  template <class ExecSpace, class P>
  static void workspace(core::WorkspaceSize& size, const Sizes& s) {
    size.add<float>(Output<ExecSpace>::workspace_floats(s.M, s.C, s.overwrite_dinp, s.gelu));
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
    using kernels::TiledGemm;
    const Output<ExecSpace> dinp(p.dinp, p.overwrite_dinp, p.has_gelu(), call.workspace);
    dinp.zero_if_overwritten(call.exec);
    TiledGemm<false, false, ExecSpace>(dinp.target(), p.dout, p.weight)
        .run(call.exec, "llmk::dinp_tiled");
    dinp.finish(call.exec, p.pre_gelu);
    if (p.overwrite_dweight) Kokkos::deep_copy(call.exec, p.dweight, 0.0f);
    if (p.has_bias() && fuse_bias) {
      if (p.overwrite_dbias) Kokkos::deep_copy(call.exec, p.dbias, 0.0f);
      TiledGemm<true, true, ExecSpace>(p.dweight, p.dout, p.inp, p.dbias)
          .run(call.exec, "llmk::dweight_dbias_tiled");
    } else {
      TiledGemm<true, false, ExecSpace>(p.dweight, p.dout, p.inp)
          .run(call.exec, "llmk::dweight_tiled");
      if (p.has_bias()) run_bias_pass(BiasPass::ColumnSums, call, p);
    }
  }
};

}  // namespace llmk::op::matmul_backward
