#include <core/spaces.hpp>
#include <ops/matmul_forward/kernels.hpp>
#include <ops/matmul_forward/kokkoskernels.hpp>

#include <KokkosBlas3_gemm.hpp>

namespace llmk::op::matmul_forward {

// pre_gelu (GELU) or out ⟵ inp · weightᵀ (+ out's old value when out
// accumulates without GELU), then one pass adds the bias and applies GELU.
template <class ExecSpace, class P>
void kokkoskernels_run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
  static_assert(std::is_same_v<P, Fp32>, "KokkosBlas::gemm runs float32 here");
  const auto sums = p.has_gelu() ? p.pre_gelu : p.out;
  const float beta = !p.has_gelu() && !p.overwrite_out ? 1.0f : 0.0f;
  // KokkosKernels 3.4's gemm runs on the space's default instance:
  // matmul_backward's "kokkoskernels" says why the fences.
  compat::fence(call.exec);
  KokkosBlas::gemm("N", "T", 1.0f, p.inp, p.weight, beta, sums);
  compat::fence(ExecSpace());
  if (p.has_gelu() || p.has_bias()) matmul_forward_finish(call.exec, p, p.has_bias());
}

#define LLMK_INSTANTIATE_KOKKOSKERNELS(Space) \
  template void kokkoskernels_run<Space, Fp32>(Call<Space>&, const Problem<Space, Fp32>&);
LLMK_FOR_EACH_SPACE(LLMK_INSTANTIATE_KOKKOSKERNELS)

}  // namespace llmk::op::matmul_forward
