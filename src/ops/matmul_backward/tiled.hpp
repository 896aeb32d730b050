// Implementation "tiled": both products through the hierarchical Kokkos GEMM
// (kernels/gemm_tiled.hpp), every precision; overwrite, GELU's factor and the
// rounding into bf16 are the GEMM's epilogue (no zero-fill, no elementwise
// pass over dinp or dweight); dbias summed by the dweight kernel from the dout
// it stages (TiledTuning::fuse_bias), or by column_sums after it.
#pragma once

#include <kernels/gemm_tiled.hpp>
#include <llmk/compat.hpp>
#include <ops/matmul_backward/problem.hpp>

namespace llmk::op::matmul_backward {

// dweight (OC × C over K = M) on a host: tiles of 128 × 384, half as wide as
// dinp's 128 × 768, so that GPT-2's dweight products make whole waves of
// tiles for 16 threads (at 128 × 768: attproj 6 tiles, qkv 18, fcproj 24).
// 16 threads of the H100 machine's host (perf/dev/tiled_host_bench.cpp, M
// 2048, % of its measured FMA peak, call H3): qkv 43 -> 55 %, attproj
// 27 -> 54, fc 58 -> 78, fcproj 59 -> 74, lm head 75 -> 73 (within its
// noise); on a faster day's host (H4) 38-58 -> 52-71 % on the first four.
// dinp keeps 128 × 768 (attproj's dinp at 128 × 384: 79 -> 43 %, H3). GPUs:
// the space's tuning.
template <class ExecSpace, bool Host = compat::is_host_space<ExecSpace>>
struct DweightTuning : kernels::TiledTuning<ExecSpace> {};
template <class ExecSpace>
struct DweightTuning<ExecSpace, true> : kernels::TiledTuning<ExecSpace> {
  static constexpr int bn = 384;
};

struct Tiled : ImplDefaults {
  static constexpr std::string_view name = "tiled";
  // Whether "auto" takes tiled before the host libraries for float32
  // (kernels/tuning.hpp says where and why).
  static constexpr bool leads_host_fp32 = kernels::tiled_leads_host_fp32;
  static constexpr BiasPass bias = BiasPass::Fused;
  // The league is a team per tile (per tile and K range when split-K splits,
  // which it does only while that stays below 2³¹); Kokkos 3 counts it in
  // int. Chunks of 2³¹ − 1 rows keep it there for any problem that fits in
  // memory.
  static constexpr index_t max_rows = core::kInt32Max;
  template <class P>
  static constexpr bool supports = true;
  static constexpr bool fused_gelu = true;

  // The GEMMs of a precision: dinp = dout·weight (NN) with GELU's factor,
  // dweight = doutᵀ·inp (TN); FuseBias: dbias summed by the dweight kernel.
  template <class ExecSpace, class P>
  using DinpGemm = kernels::TiledGemm<kernels::GemmForm<false, false>, ExecSpace, typename P::in,
                                      typename P::dinp, kernels::GeluGradEpilogue<typename P::in>>;
  template <class ExecSpace, class P, bool FuseBias>
  using DweightGemm = kernels::TiledGemm<kernels::GemmForm<true, false>, ExecSpace, typename P::in,
                                         typename P::dweight, kernels::PlainEpilogue,
                                         std::conditional_t<FuseBias, typename P::dbias, void>,
                                         DweightTuning<ExecSpace>>;

  // The products' sizes (rows, cols, depth).
  static kernels::GemmShape dinp_shape(const index_t M, const index_t C, const index_t OC) {
    return {M, C, OC};
  }
  static kernels::GemmShape dweight_shape(const index_t M, const index_t C, const index_t OC) {
    return {OC, C, M};
  }

  // Split-K's partial sums (where a product's tiles leave threads or SMs
  // idle), then column_sums' if the bias is not fused.
  template <class ExecSpace, class P>
  static void workspace(core::WorkspaceSize& size, const Sizes& s) {
    const bool fuse = kernels::TiledTuning<ExecSpace>::fuse_bias;
    size.add<float>(DinpGemm<ExecSpace, P>::split_k_workspace(dinp_shape(s.M, s.C, s.OC), false));
    size.add<float>(DweightGemm<ExecSpace, P, true>::split_k_workspace(
        dweight_shape(s.M, s.C, s.OC), s.bias && fuse));
    if (s.bias && !fuse) add_bias_pass_workspace<ExecSpace>(size, BiasPass::ColumnSums, s.M, s.OC);
  }

  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    run(call, p, kernels::TiledTuning<ExecSpace>::fuse_bias);
  }

  // fuse_bias = false: the dweight kernel, then column_sums (kept to measure
  // the two against each other).
  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p, const bool fuse_bias) {
    using kernels::gemm_operand;
    using Dinp = DinpGemm<ExecSpace, P>;
    const kernels::GemmShape dinp = dinp_shape(p.M, p.C, p.OC);
    Dinp(dinp, gemm_operand(p.dinp), gemm_operand(p.dout), gemm_operand(p.weight),
         p.overwrite_dinp, kernels::GeluGradEpilogue<typename P::in>::of(p.pre_gelu))
        .with_split_k(split_k_workspace<Dinp>(call, dinp, false))
        .run(call.exec, "llmk::dinp_tiled");
    const kernels::GemmShape dweight = dweight_shape(p.M, p.C, p.OC);
    if (p.has_bias() && fuse_bias) {
      using Dweight = DweightGemm<ExecSpace, P, true>;
      Dweight(dweight, gemm_operand(p.dweight), gemm_operand(p.dout), gemm_operand(p.inp),
              p.overwrite_dweight)
          .with_bias(p.dbias, p.overwrite_dbias)
          .with_split_k(split_k_workspace<Dweight>(call, dweight, true))
          .run(call.exec, "llmk::dweight_dbias_tiled");
    } else {
      using Dweight = DweightGemm<ExecSpace, P, false>;
      Dweight(dweight, gemm_operand(p.dweight), gemm_operand(p.dout), gemm_operand(p.inp),
              p.overwrite_dweight)
          .with_split_k(split_k_workspace<Dweight>(call, dweight, false))
          .run(call.exec, "llmk::dweight_tiled");
      if (p.has_bias()) run_bias_pass(BiasPass::ColumnSums, call, p);
    }
  }

 private:
  // The split-K workspace of one product (as declared by workspace()).
  template <class Gemm, class ExecSpace>
  static float* split_k_workspace(Call<ExecSpace>& call, const kernels::GemmShape& shape,
                                  bool bias) {
    return call.workspace.template take<float>(Gemm::split_k_workspace(shape, bias));
  }
};

}  // namespace llmk::op::matmul_backward
