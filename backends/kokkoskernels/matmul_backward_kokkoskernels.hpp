// Implementation "kokkoskernels": the two products through KokkosBlas::gemm,
// which itself dispatches at compile time to its TPLs (OpenBLAS on host spaces,
// cuBLAS on Cuda) when KokkosKernels was built with them. Included only when
// llmk is built with KokkosKernels (LLMK_HAVE_KOKKOSKERNELS).
#pragma once

#include <KokkosBlas3_gemm.hpp>
#include <llmk/compat.hpp>
#include <llmk/detail/problem.hpp>
#include <llmk/kernels/bias.hpp>

namespace llmk::detail {

template <class ExecSpace>
struct Implementation<ExecSpace, Impl::KokkosKernels> {
  static constexpr bool available = true;
  static void run(const ExecSpace& exec, const Problem<ExecSpace>& p,
                  const MatmulBackwardOptions&) {
    // KokkosKernels 3.4's gemm takes no execution-space instance: it runs on
    // the space's default instance. Fence the caller's instance first (its
    // earlier work may produce our inputs) and the default instance after, so
    // that work enqueued on `exec` next sees the results.
    compat::fence(exec);
    // dinp (M×C) += dout (M×OC) · weight (OC×C)
    KokkosBlas::gemm("N", "N", 1.0f, p.dout, p.weight, 1.0f, p.dinp);
    // dweight (OC×C) += doutᵀ (OC×M) · inp (M×C)
    KokkosBlas::gemm("T", "N", 1.0f, p.dout, p.inp, 1.0f, p.dweight);
    compat::fence(ExecSpace());
    if (p.has_bias()) kernels::bias_columns(exec, p.dbias, p.dout);
  }
};

}  // namespace llmk::detail
