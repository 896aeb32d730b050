// Implementation "onednn": the two products through oneDNN's matmul primitive
// (Debian 12's libdnnl 2.6), on host spaces, in every precision: bf16 inputs
// run oneDNN's bf16 kernels (AVX512-BF16 dot products, AMX tiles where the
// CPU has them), with float accumulation; dbias: column_sums; GELU's backward
// through kernels/gemm_output.hpp; a += gradient through oneDNN's sum post-op.
// Declared here, in core, in every build (its name is known everywhere);
// run() is defined in backends/onednn/, compiled only with oneDNN
// (LLMK_HAVE_ONEDNN, backends/CMakeLists.txt). No oneDNN header here.
#pragma once

#include <kernels/gemm_output.hpp>
#include <ops/matmul_backward/problem.hpp>
#include <ops/matmul_backward/tiled.hpp>

namespace llmk::op::matmul_backward {

// Whether oneDNN's kernels for these inputs fit the CPU it runs on, as
// oneDNN sees it (dnnl::get_effective_cpu_isa): AVX-512 for float32, native
// bf16 dot products (AVX512-BF16 or AMX) for bf16. Below that "auto" keeps
// the implementations it took before: oneDNN was measured against them only
// on such CPUs (docs/cpu.md), and bf16 without AVX512-BF16 is emulated.
// Defined in backends/onednn/ (false where oneDNN is not compiled in).
bool onednn_fits_cpu(bool bf16_inputs);
// Whether "onednn" runs bf16 here: only with native bf16 dot products
// (AVX512-BF16 or AMX). On AVX-512 alone oneDNN emulates them (not measured
// against tiled); below AVX-512 oneDNN 2.6 has no bf16 matmul
// (ONEDNN_MAX_CPU_ISA=AVX2: primitive creation fails, status 3). Elsewhere
// its info does not list bf16 and a bf16 call is refused up front.
bool onednn_runs_bf16();

struct Onednn : ImplDefaults {
  static constexpr std::string_view name = "onednn";
  static constexpr bool compiled = LLMK_HAVE_ONEDNN;
  // oneDNN reads and writes the arrays on the host's threads: spaces whose
  // memory the host can access, never Cuda's.
  template <class ExecSpace>
  static constexpr bool available_on() {
    return compat::is_host_space<ExecSpace>;
  }
  template <class P>
  static constexpr bool supports = true;
  template <class P>
  static bool runs_here() {
    if constexpr (compiled && std::is_same_v<typename P::in, bf16>) {
      return onednn_runs_bf16();
    } else {
      return true;
    }
  }
  // oneDNN's dims are int64, but its brgemm kernels take int leading
  // dimensions and blocks, and nothing larger was run here: rows are given in
  // chunks of fewer than 2³¹ elements per array, as for the int-sized BLAS
  // (a chunk of that size is seconds of work: the split costs nothing).
  static constexpr index_t max_rows = core::kInt32Max;
  static constexpr index_t max_operand_elements = core::kInt32Max;
  static constexpr index_t max_cols = core::kInt32Max;

  // float32: "auto" passes it over where tiled leads (Tiled::leads_host_fp32).
  template <class P>
  static bool auto_passes_over() {
    return Tiled::leads_host_fp32 && std::is_same_v<typename P::in, float>;
  }
  template <class P>
  static bool auto_skips(const Sizes&) {
    if constexpr (compiled) {
      return !onednn_fits_cpu(std::is_same_v<typename P::in, bf16>);
    } else {
      return true;
    }
  }

  // dinp's product needs a float workspace for GELU, except into a float
  // dinp that it overwrites (kernels/gemm_output.hpp); without GELU oneDNN
  // writes dinp itself, a bf16 one rounded once from the float sum.
  template <class ExecSpace, class P>
  using DinpOutput = kernels::GemmOutput<ExecSpace, typename P::dinp>;

  template <class ExecSpace, class P>
  static void workspace(core::WorkspaceSize& size, const Sizes& s) {
    if (s.gelu)
      size.add<float>(std::size_t(
          DinpOutput<ExecSpace, P>::workspace_floats(s.M, s.C, s.overwrite_dinp, s.gelu)));
    if (s.bias) add_bias_pass_workspace<ExecSpace>(size, bias, s.M, s.OC);
  }

  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p);
};

}  // namespace llmk::op::matmul_backward
