// "cublaslt": the two products through cuBLASLt (inputs float or bf16, float
// scale and accumulation, outputs of the gradient's own type), with epilogues
// where cuBLASLt runs them:
//  - BGRADB on the dweight GEMM: Σ_rows dout comes out of the GEMM that
//    already reads all of dout. It *writes* the bias vector, so it goes to a
//    workspace vector that is then added to (or written into) dbias: a float
//    vector where cuBLASLt takes one (float dweight), a bf16 one for a bf16
//    dweight and an overwritten dbias (add_bias_grad_epilogues says why). Refused,
//    or a bf16 dbias accumulated: column_sums on the context's second stream,
//    beside the GEMMs (as "cublas").
//  - DGELU on the dinp GEMM: D = gelu'(aux) ⊙ (A·B + beta·C), in float, one
//    rounding. Only for an overwritten dinp (beta = 0): with +=, gelu' would
//    scale dinp's old value too. aux = pre_gelu, whose type is the inputs'
//    type and dinp's (the default aux type is D's); its leading dimension C
//    must be a multiple of 8 (CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD). Refused,
//    or C not a multiple of 8, or dinp accumulated: cublas_dinp_route's
//    separate passes (one rounding of a bf16 dinp).
// Both GEMMs are described, and their algorithms chosen and checked
// (cublasLtMatmulAlgoCheck), before the first is launched: a refusal turns
// into a separate pass, an error into an exception, with the outputs
// untouched. The GEMMs: matmul_backward_cublas_common.hpp, through the
// wrapper's LtMatmul (gemm.hpp).
#include "matmul_backward_cublas_common.hpp"

#include <optional>
#include <type_traits>

namespace llmk::op::matmul_backward {
namespace {

using backends::cuda_type;
using backends::cublas::Epilogue;
using backends::cublas::Gemm;
using backends::cublas::LtMatmul;

// dbias ⟵ bias_grad, a vector of BGRADB's bias type (a free function: nvcc's
// extended lambdas fail inside static member functions of templates).
template <class TG, class TB>
void add_bias_grad(const Kokkos::Cuda& exec, const Vector<Kokkos::Cuda, TB>& dbias,
                   const void* bias_grad, const bool overwrite) {
  const TG* const grad = static_cast<const TG*>(bias_grad);
  Kokkos::parallel_for(
      "llmk::cublaslt_add_bias_grad", Range<Kokkos::Cuda>(exec, 0, index_t(dbias.extent(0))),
      KOKKOS_LAMBDA(const index_t o) { kernels::update(dbias(o), to_float(grad[o]), overwrite); });
}

template <class TB>
void add_bias_grad(const Kokkos::Cuda& exec, const Vector<Kokkos::Cuda, TB>& dbias,
                   const Epilogue& bgradb, const bool overwrite) {
  if (bgradb.bias_type == CUDA_R_32F)
    add_bias_grad<float>(exec, dbias, bgradb.bias, overwrite);
  else
    add_bias_grad<bf16>(exec, dbias, bgradb.bias, overwrite);
}

// The bias gradient Σ_m dout(m, o), o < OC: the sums of the rows of the
// dweight GEMM's op(A) = doutᵀ (OC×M), into `bias_grad` (OC floats of
// workspace). A float vector, so that dbias gets the sums rounded once;
// with a bf16 dweight (D) cuBLASLt refuses that (H200, CUDA 13:
// CUBLAS_STATUS_INVALID_VALUE) and takes only D's type: a bf16 vector, used
// when dbias is overwritten (its one rounding is then dbias's). An
// accumulated bf16 dbias takes column_sums instead: dbias + Σ, rounded once.
template <class P>
void add_bias_grad_epilogues(Gemm& dweight, const Problem<Kokkos::Cuda, P>& p, void* bias_grad) {
  if (!p.has_bias()) return;
  Epilogue e;
  e.kind = Epilogue::Kind::bias_grad;
  e.bias = bias_grad;
  dweight.epilogues.add(e);
  if (!std::is_same_v<typename P::dweight, float> && p.overwrite_dbias) {
    e.bias_type = cuda_type<typename P::dweight>();
    dweight.epilogues.add(e);
  }
}

}  // namespace

template <class ExecSpace, class P>
void cublaslt_run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
  static_assert(std::is_same_v<ExecSpace, Kokkos::Cuda>, "cuBLASLt runs on Kokkos::Cuda only");
  auto& lt = call.ctx.template resource<backends::CublasLtHandle>();
  const Math math = call.options.math;
  void* const scratch = call.workspace.template take<unsigned char>(CublasLt::scratch_bytes);
  DinpOutput<P> dinp_out(p, call.workspace);
  void* const bias_grad =
      p.has_bias() ? call.workspace.template take<float>(std::size_t(p.OC)) : nullptr;

  // DGELU where it fits and cuBLASLt runs it (dinp overwritten: beta 0);
  // else the product where dinp_out says (a bf16 dinp with GELU: a float
  // workspace, so it is rounded once).
  std::optional<LtMatmul> dinp;
  if (dgelu_fits(p)) {
    Gemm g = dinp_gemm(p, p.dinp.data(), cuda_type<typename P::dinp>(), 0.0f, math);
    g.epilogues.add(dgelu_epilogue(p));
    dinp.emplace(lt, with_scratch(g, scratch));
    if (dinp->epilogue().kind == Epilogue::Kind::dgelu) {
      dinp_out.gelu_fused();
    } else {
      dinp.reset();
    }
  }
  if (!dinp)
    dinp.emplace(lt, with_scratch(dinp_gemm(p, dinp_out.target(), dinp_out.type(),
                                            dinp_out.beta(), math),
                                  scratch));
  Gemm dweight_g = dweight_gemm(p, math);
  add_bias_grad_epilogues(dweight_g, p, bias_grad);
  const LtMatmul dweight(lt, with_scratch(dweight_g, scratch));
  const bool bias_fused = dweight.epilogue().kind == Epilogue::Kind::bias_grad;
  // A bias pass that is not fused runs on the context's second stream beside
  // the GEMMs, as cublas's (side_stream: null where the context has none).
  backends::SideStream* const side =
      bias_fused ? nullptr : side_stream(call, BiasStream::side, p.has_bias());

  ForkJoin fork(side);  // records an event: may throw, still before any launch
  if (side) {
    Call<Kokkos::Cuda> side_call{side->exec(), call.ctx, call.workspace, call.options};
    run_bias_pass(BiasPass::ColumnSums, side_call, p);  // declared in CublasLt::workspace
  }
  dinp->launch(call.exec);
  dinp_out.finish(call.exec);
  dweight.launch(call.exec);
  fork.join();
  if (!p.has_bias()) return;
  if (bias_fused) {
    add_bias_grad(call.exec, p.dbias, dweight.epilogue(), p.overwrite_dbias);
  } else if (!side) {
    run_bias_pass(BiasPass::ColumnSums, call, p);
  }
}

#define LLMK_INSTANTIATE_CUBLASLT(P)                                                             \
  template void cublaslt_run<Kokkos::Cuda, P>(Call<Kokkos::Cuda>&, const Problem<Kokkos::Cuda, P>&);
LLMK_INSTANTIATE_CUBLASLT(Fp32)
LLMK_INSTANTIATE_CUBLASLT(Bf16)
LLMK_INSTANTIATE_CUBLASLT(Bf16Fp32Grad)
#undef LLMK_INSTANTIATE_CUBLASLT

}  // namespace llmk::op::matmul_backward
