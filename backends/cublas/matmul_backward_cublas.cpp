// "cublas" and "cublas_serial": two cublasGemmEx_64 calls on the context's
// stream (inputs float or bf16, outputs of the gradient's own type, float
// accumulation; the dinp GEMM through cuBLASLt's DGELU where
// cublas_dgelu_applies), the dinp output route of cublas_dinp_route, and the shared
// column_sums kernel for dbias: for "cublas" on the context's second stream
// while the GEMMs run (the bias pass only reads dout, which the GEMMs only
// read too; it writes dbias and its own workspace partials, which nothing
// else touches), for "cublas_serial" after them. The GEMMs:
// matmul_backward_cublas_common.hpp, through the wrapper's GemmEx (gemm.hpp).
#include "matmul_backward_cublas_common.hpp"

#include <optional>
#include <type_traits>

namespace llmk::op::matmul_backward {

template <class ExecSpace, class P>
void cublas_gemmex_run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p, BiasStream where) {
  static_assert(std::is_same_v<ExecSpace, Kokkos::Cuda>, "cuBLAS runs on Kokkos::Cuda only");
  // Everything that can fail comes first, before any launch: the handle (bound
  // to the context's stream), the side stream, the workspace, the GEMMs'
  // checks.
  const auto& handle = call.ctx.template resource<backends::CublasHandle>();
  backends::SideStream* const side = side_stream(call, where, p.has_bias());
  DinpOutput<P> dinp(p, call.workspace);
  // bf16 with GELU and dinp overwritten: the dinp GEMM through cuBLASLt with
  // the DGELU epilogue where it runs it (cublas_dgelu_applies).
  std::optional<backends::cublas::LtMatmul> dinp_lt;
  if (cublas_dgelu_applies<P>(p.sizes())) {
    void* const scratch = call.workspace.template take<unsigned char>(kCublasLtScratchBytes);
    backends::cublas::Gemm g =
        dinp_gemm(p, p.dinp.data(), backends::cuda_type<typename P::dinp>(), 0.0f,
                  call.options.math);
    g.epilogues.add(dgelu_epilogue(p));
    dinp_lt.emplace(call.ctx.template resource<backends::CublasLtHandle>(),
                    with_scratch(g, scratch));
    if (dinp_lt->epilogue().kind == backends::cublas::Epilogue::Kind::dgelu)
      dinp.gelu_fused();
    else
      dinp_lt.reset();
  }
  std::optional<backends::cublas::GemmEx> dinp_product;
  if (!dinp_lt)
    dinp_product.emplace(dinp_gemm(p, dinp.target(), dinp.type(), dinp.beta(), call.options.math));
  const backends::cublas::GemmEx dweight_product(dweight_gemm(p, call.options.math));

  ForkJoin fork(side);  // records an event: may throw, still before any launch
  if (side) {
    // First, so that it starts beside the dinp GEMM.
    Call<Kokkos::Cuda> side_call{side->exec(), call.ctx, call.workspace, call.options};
    run_bias_pass(CublasGemmExTraits::bias, side_call, p);
  }
  if (dinp_lt)
    dinp_lt->launch(call.exec);
  else
    dinp_product->launch(handle);
  dinp.finish(call.exec);
  dweight_product.launch(handle);
  fork.join();
  if (!side && p.has_bias()) run_bias_pass(CublasGemmExTraits::bias, call, p);
}

#define LLMK_INSTANTIATE_CUBLAS(P)                                      \
  template void cublas_gemmex_run<Kokkos::Cuda, P>(Call<Kokkos::Cuda>&, \
                                                   const Problem<Kokkos::Cuda, P>&, BiasStream);
LLMK_INSTANTIATE_CUBLAS(Fp32)
LLMK_INSTANTIATE_CUBLAS(Bf16)
LLMK_INSTANTIATE_CUBLAS(Bf16Fp32Grad)
#undef LLMK_INSTANTIATE_CUBLAS

}  // namespace llmk::op::matmul_backward
