#include <ops/matmul_backward/kokkoskernels.hpp>
#include <core/spaces.hpp>

#include <KokkosBlas3_gemm.hpp>

namespace llmk::op::matmul_backward {

namespace {

// KokkosKernels 3.4 (its cuBLAS TPL) through 4.6 (its own GEMM) compute
// C = Aᵀ·B on a GPU with their "dot-based" GEMM when C is small (fewer than
// 100 entries for a LayoutRight A, 1600 for LayoutLeft): teams split each
// dot product and add their partial sums into C with atomics, so the result
// changes from run to run (on the H200, dweight at M = 8192, OC = 2, C = 3
// differed in its last bit between two entry points' calls of one product). llmk's results are
// deterministic: such products go another way (below the larger threshold,
// to leave some room should KokkosKernels retune it).
template <class ExecSpace>
bool takes_dot_based_gemm(index_t rows_of_c, index_t cols_of_c) {
  constexpr bool on_gpu =
      !Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ExecSpace::memory_space>::accessible;
  return on_gpu && rows_of_c * cols_of_c < 1600;
}

}  // namespace

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
  const float dweight_beta = p.overwrite_dweight ? 0.0f : 1.0f;
  if (takes_dot_based_gemm<ExecSpace>(p.OC, p.C)) {
    // doutᵀ is the same memory read as a LayoutLeft OC×M matrix: an "N"
    // product of mixed layouts, which no TPL takes and KokkosKernels' own
    // blocked GEMM (deterministic) computes.
    const Kokkos::View<const float**, Kokkos::LayoutLeft, typename ExecSpace::memory_space,
                       Kokkos::MemoryTraits<Kokkos::Unmanaged>>
        dout_t(p.dout.data(), p.OC, p.M);
    KokkosBlas::gemm("N", "N", 1.0f, dout_t, p.inp, dweight_beta, p.dweight);
  } else {
    KokkosBlas::gemm("T", "N", 1.0f, p.dout, p.inp, dweight_beta, p.dweight);
  }
  compat::fence(ExecSpace());
  dinp.finish(call.exec, p.pre_gelu);
  if (p.has_bias()) run_bias_pass(bias, call, p);
}

#define LLMK_INSTANTIATE_KOKKOSKERNELS(Space) \
  template void KokkosKernels::run<Space, Fp32>(Call<Space>&, const Problem<Space, Fp32>&);
LLMK_FOR_EACH_SPACE(LLMK_INSTANTIATE_KOKKOSKERNELS)

}  // namespace llmk::op::matmul_backward
