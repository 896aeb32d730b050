// Implementations "cublas" and "cublaslt", for Kokkos::Cuda only. Declared in
// every build (their names are known everywhere); run() is compiled only with
// cuBLAS (LLMK_HAVE_CUBLAS, backends/CMakeLists.txt), in
// matmul_backward_cublas.cpp and matmul_backward_cublaslt.cpp.
#pragma once

#include <kernels/gemm_output.hpp>
#include <ops/matmul_backward/problem.hpp>

namespace llmk::op::matmul_backward {

// cublasSgemm_64 twice (β = 1) on the context's stream; dbias: column_sums.
struct Cublas : ImplDefaults {
  static constexpr std::string_view name = "cublas";
  static constexpr bool compiled = LLMK_HAVE_CUBLAS;
  template <class ExecSpace>
  static constexpr bool available_on() {
    return compat::is_cuda<ExecSpace>;
  }
  // 64-bit cuBLAS entry points: no row limit.
  static constexpr bool tf32 = true;

  template <class ExecSpace>
  using DinpOutput = kernels::GemmOutput<ExecSpace, float>;

  template <class ExecSpace, class P>
  static void workspace(core::WorkspaceSize& size, const Sizes& s) {
    size.add<float>(DinpOutput<ExecSpace>::workspace_floats(s.M, s.C, s.overwrite_dinp, s.gelu));
    if (s.bias) add_bias_pass_workspace<ExecSpace>(size, bias, s.M, s.OC);
  }

  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p);
};

// cuBLASLt GEMMs; the dweight GEMM carries the BGRADB epilogue, which writes
// Σ_rows dout into a workspace vector that is then added to dbias.
struct CublasLt : ImplDefaults {
  static constexpr std::string_view name = "cublaslt";
  static constexpr bool compiled = LLMK_HAVE_CUBLAS;
  template <class ExecSpace>
  static constexpr bool available_on() {
    return compat::is_cuda<ExecSpace>;
  }
  static constexpr BiasPass bias = BiasPass::Fused;
  // On an H200, cuBLASLt's heuristic answered CUBLAS_STATUS_NOT_SUPPORTED for
  // M = 2³¹ + 2²⁰ rows (C = 1, OC = 2): give it matrices of fewer than 2³¹
  // elements, as the int-sized libraries.
  static constexpr index_t max_operand_elements = core::kInt32Max;
  // cuBLASLt's own scratch (Hopper kernels want some).
  static constexpr std::size_t scratch_bytes = 32u << 20;
  static constexpr bool tf32 = true;

  template <class ExecSpace>
  using DinpOutput = kernels::GemmOutput<ExecSpace, float>;

  template <class ExecSpace, class P>
  static void workspace(core::WorkspaceSize& size, const Sizes& s) {
    size.add<unsigned char>(scratch_bytes);
    size.add<float>(DinpOutput<ExecSpace>::workspace_floats(s.M, s.C, s.overwrite_dinp, s.gelu));
    if (s.bias) size.add<float>(std::size_t(s.OC));
  }

  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p);
};

}  // namespace llmk::op::matmul_backward
