// Implementation "cublas", for Kokkos::Cuda only: llm.c's structure (its
// cuBLAS attention backward) with llmk's layout. The four products are
// cuBLAS strided-batched GEMMs (cublasGemmStridedBatchedEx_64 through the
// shared wrapper, backends/cublas/gemm.hpp) working directly on qkv's,
// dout's and dqkv's rows: no permuted copies. A batch of one launch is every
// head of one sequence (stride HS) or one head of every sequence (stride
// T·3C), whichever makes fewer launches (min(B, NH) per product). The T × T
// steps between them are kernels/attention_backward.hpp's, as in
// "materialized":
//   1. W ⟵ att, its masked part zeros       (att's masked part is never read)
//   2. dv ⟵ Wᵀ · dout_h                      (W: att's type)
//   3. S ⟵ datt = dout_h · vᵀ                (float)
//   4. W ⟵ dpreatt = att ⊙ (S − drow)       (a team per row, causal part)
//   5. dq ⟵ α · W · k,  6. dk ⟵ α · Wᵀ · q
// In "fp32" W and S are one float array (the steps in place); "bf16" takes
// a bf16 W (cuBLAS's bf16 GEMMs need both inputs bf16: dpreatt is rounded
// to bf16 once, as llm.c's) and a float S. Options.math = Math::tf32 runs the
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
    if constexpr (float_inputs<P>) {
      size.add<float>(tt_elements(s));  // W = S
    } else {
      size.add<typename P::in>(tt_elements(s));  // W
      size.add<float>(tt_elements(s));           // S
    }
  }

  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    cublas_run(call, p);
  }
};

}  // namespace llmk::op::attention_backward
