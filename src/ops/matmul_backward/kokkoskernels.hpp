// Implementation "kokkoskernels": the two products through KokkosBlas::gemm,
// which itself dispatches at compile time to its TPLs (OpenBLAS on host spaces,
// cuBLAS on Cuda) when KokkosKernels was built with them; dbias: column_sums.
// float32 only (KokkosKernels 3.4 has no bf16 GEMM); GELU's backward and the
// updates through kernels/gemm_output.hpp.
// Declared here, in core, in every build (its name is known everywhere);
// run() is defined in backends/kokkoskernels/, compiled only with
// KokkosKernels (LLMK_HAVE_KOKKOSKERNELS, backends/CMakeLists.txt).
#pragma once

#include <kernels/gemm_output.hpp>
#include <ops/matmul_backward/problem.hpp>
#include <ops/matmul_backward/tiled.hpp>

#include <type_traits>

namespace llmk::op::matmul_backward {

struct KokkosKernels : ImplDefaults {
  static constexpr std::string_view name = "kokkoskernels";
  static constexpr bool compiled = LLMK_HAVE_KOKKOSKERNELS;
  // On host spaces KokkosBlas::gemm is the process's BLAS: "auto" takes it
  // only where that BLAS shares Kokkos' threads (core/op/select.hpp).
  static constexpr bool host_blas = true;
  // ... and passes it over for float32 where tiled leads (Tiled::leads_host_fp32).
  template <class P>
  static bool auto_passes_over() {
    return Tiled::leads_host_fp32 && std::is_same_v<typename P::in, float>;
  }
  // The BLAS under KokkosBlas::gemm takes int sizes (OpenBLAS's interface, and
  // Kokkos 3.4's cuBLAS TPL calls the int API), and KokkosBlas counts a
  // matrix's elements in int: on an H200, 2³¹ − 1 rows of a dout with OC = 2
  // (2³² elements) gave wrong dinp rows, silently.
  static constexpr index_t max_rows = core::kInt32Max;
  static constexpr index_t max_operand_elements = core::kInt32Max;
  static constexpr index_t max_cols = core::kInt32Max;

  // dinp's product needs a float workspace for GELU with +=.
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

}  // namespace llmk::op::matmul_backward
