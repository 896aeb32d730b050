#include <backends/kokkoskernels/matmul_backward_kokkoskernels.hpp>
#include <core/spaces.hpp>

#include <KokkosBlas3_gemm.hpp>

namespace llmk::op::matmul_backward {

template <class ExecSpace>
void KokkosKernels::run(Call<ExecSpace>& call, const Problem<ExecSpace>& p) {
  // KokkosKernels 3.4's gemm takes no execution-space instance: it runs on
  // the space's default instance. Fence the caller's instance first (its
  // earlier work may produce our inputs) and the default instance after, so
  // that work enqueued on call.exec next sees the results.
  compat::fence(call.exec);
  // dinp (M×C) += dout (M×OC) · weight (OC×C)
  KokkosBlas::gemm("N", "N", 1.0f, p.dout, p.weight, 1.0f, p.dinp);
  // dweight (OC×C) += doutᵀ (OC×M) · inp (M×C)
  KokkosBlas::gemm("T", "N", 1.0f, p.dout, p.inp, 1.0f, p.dweight);
  compat::fence(ExecSpace());
  if (p.has_bias()) run_bias_pass(bias, call, p.dbias, p.dout);
}

#define LLMK_INSTANTIATE_KOKKOSKERNELS(Space) \
  template void KokkosKernels::run<Space>(Call<Space>&, const Problem<Space>&);
LLMK_FOR_EACH_SPACE(LLMK_INSTANTIATE_KOKKOSKERNELS)

}  // namespace llmk::op::matmul_backward
