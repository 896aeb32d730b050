// Implementation "cublas", for Kokkos::Cuda only: llm.c's structure (its
// cuBLAS attention backward) with llmk's layout. The four products are
// cuBLAS strided-batched GEMMs (cublasGemmStridedBatchedEx_64 through the
// shared wrapper, backends/cublas/gemm.hpp) working directly on qkv's,
// dout's and dqkv's rows: no permuted copies. A batch of one launch is every
// head of one sequence (stride HS) or one head of every sequence (stride
// T·3C), whichever makes fewer launches (min(B, NH) per product). The T × T
// steps between them are kernels/attention_backward.hpp's:
//   1. S ⟵ datt = dout_h · vᵀ                     (float)
//   2. P ⟵ dpreatt = att ⊙ (S − drow), and A ⟵ att with its masked part
//      zeros, in one pass (a warp per row; att's masked part is never read)
//   3. dv ⟵ Aᵀ · dout_h,  dq ⟵ α · P · k,  dk ⟵ α · Pᵀ · q
// In "fp32" P is S (in place) and A a second float array; "bf16" takes bf16
// A and P (cuBLAS's bf16 GEMMs need both inputs bf16: dpreatt is rounded to
// bf16 once, as llm.c's) beside the float S. Options.math = Math::tf32 runs the
// fp32 products on TF32 tensor cores. Declared here in every build (Ginkgo's
// way), defined in backends/cublas/attention_backward_cublas.cpp, compiled
// only with cuBLAS (LLMK_HAVE_CUBLAS). No CUDA header here.
#pragma once

#include <llmk/compat.hpp>
#include <ops/attention_backward/problem.hpp>

#include <cstddef>
#include <type_traits>

namespace llmk::op::attention_backward {

// The work of "cublas" (attention_backward_cublas.cpp), explicitly
// instantiated there for Kokkos::Cuda and both precisions.
template <class ExecSpace, class P>
void cublas_run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p);

struct Cublas : ImplDefaults {
  static constexpr std::string_view name = "cublas";
  static constexpr bool compiled = LLMK_HAVE_CUBLAS;
  template <class ExecSpace>
  static constexpr bool available_on() {
    return compat::is_cuda<ExecSpace>;
  }
  static constexpr bool tf32 = true;
  // dpreatt is rounded to bf16 before the dq and dk products, and with
  // dqkv accumulated cuBLAS rounds the product before adding the old bf16
  // value (matmul's cublas.hpp): not one rounding per element of dqkv.
  static constexpr bool rounds_once = false;

  static std::size_t tt_elements(const Sizes& s) { return std::size_t(s.M * s.NH * s.T * s.T); }
  template <class P>
  static constexpr bool float_inputs = std::is_same_v<typename P::in, float>;

  template <class ExecSpace, class P>
  static void workspace(core::WorkspaceSize& size, const Sizes& s) {
    size.add<float>(tt_elements(s));  // S (and P in fp32)
    size.add<typename P::in>(tt_elements(s));  // A
    if constexpr (!float_inputs<P>) size.add<typename P::in>(tt_elements(s));  // P
  }

  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    cublas_run(call, p);
  }
};

}  // namespace llmk::op::attention_backward
