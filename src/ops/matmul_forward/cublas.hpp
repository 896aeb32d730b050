// Implementation "cublaslt", for Kokkos::Cuda only: declared here in every
// build, its work defined in backends/cublas/matmul_forward_cublaslt.cpp
// (compiled with cuBLAS: LLMK_HAVE_CUBLAS). No CUDA header here.
#pragma once

#include <ops/matmul_forward/problem.hpp>

namespace llmk::op::matmul_forward {

template <class ExecSpace, class P>
void cublaslt_run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p);

// One cuBLASLt GEMM, with llm.c's epilogues: BIAS, or GELU_AUX_BIAS (GELU_AUX
// without a bias) writing pre_gelu as its aux output and gelu of it into
// out. Where cuBLASLt refuses one (pre_gelu's leading dimension OC not a
// multiple of 8, alignment) or cannot express the call (GELU with out
// accumulated: GELU would apply to out's old value too), the GEMM writes
// pre_gelu (or out) with the bias and a pass applies the rest.
struct CublasLt : core::op::OnCuda<ImplDefaults, LLMK_HAVE_CUBLAS> {
  static constexpr std::string_view name = "cublaslt";
  // cuBLASLt rounds pre_gelu to bf16 before its GELU reads it, and with
  // beta = 1 rounds the product before adding out's old value.
  static constexpr bool rounds_once = false;
  // Matrices of fewer than 2³¹ elements (matmul_backward's "cublaslt" says why).
  static constexpr index_t max_operand_elements = core::kInt32Max;
  static constexpr std::size_t scratch_bytes = std::size_t(32) << 20;

  template <class ExecSpace, class P>
  static void workspace(core::WorkspaceSize& size, const Sizes&) {
    size.add<unsigned char>(scratch_bytes);
  }
  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    cublaslt_run(call, p);
  }
};

}  // namespace llmk::op::matmul_forward
