#include <ops/matmul_backward/kokkoskernels.hpp>
#include <core/spaces.hpp>

#include <KokkosBlas3_gemm.hpp>

namespace llmk::op::matmul_backward {

template <class ExecSpace, class P>
void KokkosKernels::run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
  static_assert(std::is_same_v<P, Fp32>, "KokkosBlas::gemm runs float32 here");
  const DinpOutput<ExecSpace> dinp(p.dinp, p.overwrite_dinp, p.has_gelu(), call.workspace);
  // KokkosKernels 3.4's gemm takes no execution-space instance: it runs on
  // the space's default instance. Fence the caller's instance first (its
  // earlier work may produce our inputs) and the default instance after, so
  // that work enqueued on call.exec next sees the results.
  compat::fence(call.exec);
  // dinp (M×C) ⟵ dout (M×OC) · weight (OC×C)
  KokkosBlas::gemm("N", "N", 1.0f, p.dout, p.weight, dinp.beta(), dinp.target());
  // dweight (OC×C) ⟵ doutᵀ (OC×M) · inp (M×C)
  KokkosBlas::gemm("T", "N", 1.0f, p.dout, p.inp, p.overwrite_dweight ? 0.0f : 1.0f, p.dweight);
  compat::fence(ExecSpace());
  dinp.finish(call.exec, p.pre_gelu);
  if (p.has_bias()) run_bias_pass(bias, call, p);
}

#define LLMK_INSTANTIATE_KOKKOSKERNELS(Space) \
  template void KokkosKernels::run<Space, Fp32>(Call<Space>&, const Problem<Space, Fp32>&);
LLMK_FOR_EACH_SPACE(LLMK_INSTANTIATE_KOKKOSKERNELS)

}  // namespace llmk::op::matmul_backward
