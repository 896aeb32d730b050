// Implementation "kokkoskernels": the product through KokkosBlas::gemm (its
// TPLs: OpenBLAS on host spaces, cuBLAS on Cuda, where KokkosKernels was
// built with them), the bias and GELU in one pass after it
// (matmul_forward_finish). float32 only (KokkosKernels 3.4 has no bf16 GEMM).
// Declared here in every build; run() is defined in backends/kokkoskernels/,
// compiled only with KokkosKernels (LLMK_HAVE_KOKKOSKERNELS).
#pragma once

#include <kernels/tuning.hpp>
#include <ops/matmul_forward/problem.hpp>

#include <type_traits>

namespace llmk::op::matmul_forward {

template <class ExecSpace, class P>
void kokkoskernels_run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p);

struct KokkosKernels : ImplDefaults {
  static constexpr std::string_view name = "kokkoskernels";
  static constexpr bool compiled = LLMK_HAVE_KOKKOSKERNELS;
  template <class P>
  static constexpr bool supports = std::is_same_v<P, Fp32>;
  // The same rules as matmul_backward's "kokkoskernels": on host spaces it
  // is the process's BLAS, which "auto" takes only where that BLAS shares
  // Kokkos' threads, and passes over where the tiled GEMM leads.
  static constexpr bool host_blas = true;
  template <class P>
  static bool auto_passes_over() {
    return kernels::tiled_leads_host_fp32 && std::is_same_v<typename P::in, float>;
  }
  // int sizes and element counts (matmul_backward's "kokkoskernels" says why).
  static constexpr index_t max_rows = core::kInt32Max;
  static constexpr index_t max_operand_elements = core::kInt32Max;
  static constexpr index_t max_cols = core::kInt32Max;

  template <class ExecSpace, class P>
  static void workspace(core::WorkspaceSize&, const Sizes&) {}
  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    kokkoskernels_run(call, p);
  }
};

}  // namespace llmk::op::matmul_forward
