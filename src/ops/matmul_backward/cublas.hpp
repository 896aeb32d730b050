// Implementations "cublas", "cublas_serial" and "cublaslt", for Kokkos::Cuda
// only, in every precision configuration. Declared here, in core, in every
// build (their names are known everywhere; Ginkgo's way: kernels declared in
// core, defined in the backend); their work is defined in backends/cublas/
// (matmul_backward_cublas.cpp, matmul_backward_cublaslt.cpp), compiled only
// with cuBLAS (LLMK_HAVE_CUBLAS, backends/CMakeLists.txt). Includes run one
// way: backends/ include src/, never the reverse. No CUDA header here.
#pragma once

#include <ops/matmul_backward/problem.hpp>

namespace llmk::op::matmul_backward {

// How the cuBLAS backends write dinp ⟵ (dout·W) ⊙ gelu'(pre_gelu). cuBLAS
// computes  D = product + beta·D  in float and rounds D's type once, so:
//  - direct:            no GELU: the GEMM writes dinp (beta 0 or 1), one rounding;
//  - direct_then_scale: GELU, float dinp overwritten: the GEMM writes dinp
//                       (beta 0), then one elementwise pass dinp ⊙= gelu'(pre_gelu)
//                       in place (8 bytes per element, no workspace).
//  - staged:            GELU otherwise: gelu' must scale the product, not
//                       dinp + product, and a bf16 dinp must be rounded once,
//                       so the GEMM writes a float workspace (beta 0) and
//                       kernels::GemmOutput writes product ⊙ gelu' into dinp
//                       (= or +=), one rounding.
enum class CublasDinpRoute { direct, direct_then_scale, staged };

// A bf16 dinp is staged too: scaling it in place would round it twice (the
// product, then the product ⊙ gelu'), 2.9e-3 from naive at the seed shape on
// the H200 against 1.1e-4 for one rounding, and llmk promises one rounding.
template <class P>
constexpr CublasDinpRoute cublas_dinp_route(const bool overwrite, const bool gelu) {
  if (!gelu) return CublasDinpRoute::direct;
  return overwrite && std::is_same_v<typename P::dinp, float> ? CublasDinpRoute::direct_then_scale
                                                               : CublasDinpRoute::staged;
}

// Floats of workspace the dinp route takes (the staged product).
template <class P>
index_t cublas_dinp_workspace_floats(const Sizes& s) {
  return cublas_dinp_route<P>(s.overwrite_dinp, s.gelu) == CublasDinpRoute::staged ? s.M * s.C
                                                                                    : 0;
}

// cuBLASLt's own scratch (Hopper kernels want some): "cublaslt"'s GEMMs and
// "cublas"'s DGELU GEMM.
inline constexpr std::size_t kCublasLtScratchBytes = 32u << 20;

// Whether "cublas" and "cublas_serial" send the dinp GEMM to cuBLASLt with
// its DGELU epilogue (product ⊙ gelu' straight into dinp): bf16 inputs with
// GELU, dinp overwritten (DGELU scales beta·C too), C a multiple of 8 (the
// epilogue's aux leading dimension); the GEMM falls back to the separate
// pass where cuBLASLt refuses. It saves the staged float product and its
// pass (cublas_dinp_route): GPT-2's fcproj, where dinp is M × 4C, spent
// 0.39 ms a layer on it with bf16 weights and float gradients (H200, its
// fc, the same work without GELU, 0.14). Not in float (DGELU measured
// slower there: 0.473 ms against 0.382 in TF32 at the seed shape).
template <class P>
constexpr bool cublas_dgelu_applies(const Sizes& s) {
  return std::is_same_v<typename P::in, bf16> && s.gelu && s.overwrite_dinp && s.C % 8 == 0;
}

// Where "cublas" runs the dbias pass: beside the GEMMs on the context's second
// stream, or after them on the caller's stream.
enum class BiasStream { side, caller };

// The work of "cublas" and "cublas_serial" (matmul_backward_cublas.cpp) and
// of "cublaslt" (matmul_backward_cublaslt.cpp), explicitly instantiated there
// for Kokkos::Cuda and every precision.
template <class ExecSpace, class P>
void cublas_gemmex_run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p, BiasStream where);
template <class ExecSpace, class P>
void cublaslt_run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p);

// The traits the two cublasGemmEx implementations share.
struct CublasGemmExTraits : core::op::OnCuda<ImplDefaults, LLMK_HAVE_CUBLAS> {
  // 64-bit cuBLAS entry points: no row limit.
  template <class P>
  static constexpr bool supports = true;
  static constexpr bool tf32 = true;
  // A bf16 output is not always rounded once: cublasGemmEx picks its
  // algorithm itself, and on the H200 it added split-K partial sums in bf16
  // (a small dinp of long sums: 6 of 15 elements one ulp from the nearest
  // bf16), and with beta = 1 it rounds the product before adding the old
  // bf16 value (seed shape: dweight 2.35e-3 from float64 against 1.66e-3 for
  // one rounding, √2 times: two roundings). As llm.c's and PyTorch's bf16.
  static constexpr bool rounds_once = false;
  // GELU: cuBLASLt's DGELU epilogue where cublas_dgelu_applies, else a
  // separate pass (cublas_dinp_route).

  template <class ExecSpace, class P>
  static void workspace(core::WorkspaceSize& size, const Sizes& s) {
    size.add<float>(std::size_t(cublas_dinp_workspace_floats<P>(s)));
    if (cublas_dgelu_applies<P>(s)) size.add<unsigned char>(kCublasLtScratchBytes);
    if (s.bias) add_bias_pass_workspace<ExecSpace>(size, bias, s.M, s.OC);
  }
};

// cublasGemmEx_64 twice on the context's stream, with the context's handle;
// dbias: column_sums on the context's second stream, concurrently with the
// GEMMs (forked from and joined to the caller's stream, so the call is still
// ordered on it as one unit). The second stream, its Kokkos::Cuda instance
// and its events belong to the context (backends::SideStreamSlot), made on
// its first call with a bias; where they cannot be made (Kokkos 3.4 makes a
// Kokkos::Cuda(stream) only on the thread that initialized Kokkos: make the
// context's first call there), the context runs the pass on the caller's
// stream, as "cublas_serial".
struct Cublas : CublasGemmExTraits {
  static constexpr std::string_view name = "cublas";
  // "auto" leaves all-bf16 GELU with an overwritten dinp to cublaslt, whose
  // DGELU epilogue saved the separate pass over dinp (H200: 0.154 ms against
  // 0.200 at the seed shape, 1.795 against 1.869 at the LM head) before
  // "cublas" took the same epilogue (cublas_dgelu_applies: the two 0.150 ms
  // at GPT-2's fcproj, call E1). Not in float (DGELU measured slower: 0.473
  // against 0.382 in TF32) nor in bf16-fp32grad (cuBLASLt's BGRADB then costs
  // more than DGELU saves: 2.154 against 1.890 at the LM head; at the fcproj
  // "cublas" 0.152, "cublaslt" 0.169). docs/performance.md has the tables.
  template <class P>
  static bool auto_skips(const Sizes& s) {
    return s.gelu && s.overwrite_dinp && std::is_same_v<P, Bf16>;
  }
  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    cublas_gemmex_run(call, p, BiasStream::side);
  }
};

// The same, with dbias after the GEMMs on the caller's stream: the reference
// that measures what the concurrent bias pass gains.
struct CublasSerial : CublasGemmExTraits {
  static constexpr std::string_view name = "cublas_serial";
  template <class P>
  static bool auto_skips(const Sizes&) {
    return true;  // a measurement, never "auto"
  }
  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    cublas_gemmex_run(call, p, BiasStream::caller);
  }
};

// cuBLASLt GEMMs. The dweight GEMM carries the BGRADB epilogue (Σ_rows dout
// into a workspace vector, then added to dbias); the dinp GEMM carries the
// DGELU epilogue when dinp is overwritten (DGELU scales product + beta·C, so
// it cannot accumulate). Where cuBLASLt refuses an epilogue for the types,
// shape or alignment, the call falls back to the separate passes
// (column_sums; the in-place GELU scale), decided before any launch. On the
// H200 (CUDA 13) that is: BGRADB for "bf16" only with dbias overwritten
// (cuBLASLt writes a bf16 dweight's bias vector only in bf16, and an
// accumulated bf16 dbias would be rounded twice), DGELU only for C % 8 == 0
// (matmul_backward_cublaslt.cpp).
struct CublasLt : core::op::OnCuda<ImplDefaults, LLMK_HAVE_CUBLAS> {
  static constexpr std::string_view name = "cublaslt";
  // A bf16 output is not always rounded once, though split-K partial sums
  // stay float (the heuristic is told so): with beta = 1 cuBLASLt rounds the
  // product before adding the old bf16 value (seed shape: dweight 2.35e-3
  // against 1.66e-3 for one rounding), and the DGELU epilogue rounds the
  // product before it applies gelu' (117 of 431 elements one ulp from the
  // correctly rounded value). Kept: llm.c trains this way, and DGELU's
  // one-rounding alternative (a float product, then a pass) measured
  // 0.200 ms against 0.154 at the seed shape (docs/performance.md).
  static constexpr bool rounds_once = false;
  static constexpr BiasPass bias = BiasPass::Fused;
  // On an H200, cuBLASLt's heuristic answered CUBLAS_STATUS_NOT_SUPPORTED for
  // M = 2³¹ + 2²⁰ rows (C = 1, OC = 2): give it matrices of fewer than 2³¹
  // elements, as the int-sized libraries.
  static constexpr index_t max_operand_elements = core::kInt32Max;
  // cuBLASLt's own scratch (Hopper kernels want some).
  static constexpr std::size_t scratch_bytes = kCublasLtScratchBytes;
  template <class P>
  static constexpr bool supports = true;
  static constexpr bool tf32 = true;
  // Fused when dinp is overwritten (DGELU), a separate pass otherwise.
  static constexpr bool fused_gelu = true;

  template <class ExecSpace, class P>
  static void workspace(core::WorkspaceSize& size, const Sizes& s) {
    size.add<unsigned char>(scratch_bytes);
    size.add<float>(std::size_t(cublas_dinp_workspace_floats<P>(s)));
    if (s.bias) {
      size.add<float>(std::size_t(s.OC));  // BGRADB's output
      // The fallback when BGRADB is refused: decided after the workspace is
      // allocated, so it is always declared.
      add_bias_pass_workspace<ExecSpace>(size, BiasPass::ColumnSums, s.M, s.OC);
    }
  }

  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    cublaslt_run(call, p);
  }
};

}  // namespace llmk::op::matmul_backward
