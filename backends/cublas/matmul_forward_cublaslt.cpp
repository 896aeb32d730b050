// matmul_forward's "cublaslt": out (M × OC) = inp (M × C) · weightᵀ in one
// cuBLASLt GEMM (gemm.hpp's LtMatmul; inputs float or bf16, float
// accumulation), with llm.c's epilogues:
//  - no GELU: BIAS (D = product + β·D + bias), β = 1 when out accumulates;
//  - GELU, out overwritten: GELU_AUX_BIAS (GELU_AUX without a bias), aux =
//    pre_gelu (product + bias, in out's type), D = out = gelu(aux);
//  - GELU, out accumulated: GELU would apply to out's old value too (cuBLASLt
//    adds β·D before its epilogue), so the GEMM writes pre_gelu with BIAS and
//    a pass adds gelu(pre_gelu) to out.
// An epilogue cuBLASLt refuses (GELU's aux needs OC % 8 == 0) falls back the
// same way: the GEMM writes what it can, a pass over its output does the
// rest (the bias, the GELU), decided before any launch.
#include "gemm.hpp"

#include <ops/matmul_forward/cublas.hpp>
#include <ops/matmul_forward/kernels.hpp>

#include <optional>

namespace llmk::op::matmul_forward {
namespace {

using backends::cuda_type;
using backends::cublas::Epilogue;
using backends::cublas::Gemm;
using backends::cublas::LtMatmul;

// The product into d (out or pre_gelu: M × OC, leading dimension OC).
template <class P>
Gemm forward_gemm(const Problem<Kokkos::Cuda, P>& p, void* d, float beta, void* scratch) {
  const cudaDataType_t in = cuda_type<typename P::in>();
  Gemm g;
  g.what = "out";
  g.m = p.M, g.n = p.OC, g.k = p.C;
  g.op_b = backends::cublas::Op::T;
  g.a = {p.inp.data(), p.C, in};
  g.b = {p.weight.data(), p.C, in};
  g.d = {d, p.OC, cuda_type<typename P::out>()};
  g.beta = beta;
  g.workspace = scratch;
  g.workspace_bytes = CublasLt::scratch_bytes;
  return g;
}

template <class P>
void* bias_of(const Problem<Kokkos::Cuda, P>& p) {
  return p.has_bias() ? const_cast<typename P::in*>(p.bias.data()) : nullptr;
}

}  // namespace

template <class ExecSpace, class P>
void cublaslt_run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
  static_assert(std::is_same_v<ExecSpace, Kokkos::Cuda>, "cuBLASLt runs on Kokkos::Cuda only");
  auto& lt = call.ctx.template resource<backends::CublasLtHandle>();
  void* const scratch = call.workspace.template take<unsigned char>(CublasLt::scratch_bytes);
  void* const bias = bias_of(p);

  std::optional<LtMatmul> gemm;
  if (p.has_gelu() && p.overwrite_out) {
    Gemm g = forward_gemm(p, p.out.data(), 0.0f, scratch);
    Epilogue e;
    e.kind = Epilogue::Kind::gelu_aux;
    e.aux = p.pre_gelu.data();
    e.aux_ld = p.OC;
    e.bias = bias;
    e.bias_type = cuda_type<typename P::in>();
    g.epilogues.add(e);
    gemm.emplace(lt, g);
    if (gemm->epilogue().kind != Epilogue::Kind::gelu_aux) gemm.reset();
  }
  bool pass = false, pass_bias = false;
  if (!gemm) {
    // The sums into pre_gelu (GELU) or out, with the bias where cuBLASLt adds it.
    void* const d = p.has_gelu() ? p.pre_gelu.data() : p.out.data();
    Gemm g = forward_gemm(p, d, !p.has_gelu() && !p.overwrite_out ? 1.0f : 0.0f, scratch);
    if (bias) {
      Epilogue e;
      e.kind = Epilogue::Kind::bias;
      e.bias = bias;
      e.bias_type = cuda_type<typename P::in>();
      g.epilogues.add(e);
    }
    gemm.emplace(lt, g);
    pass_bias = bias && gemm->epilogue().kind != Epilogue::Kind::bias;
    pass = p.has_gelu() || pass_bias;
  }
  gemm->launch(call.exec);
  if (pass) matmul_forward_finish(call.exec, p, pass_bias);
}

#define LLMK_INSTANTIATE_CUBLASLT(P) \
  template void cublaslt_run<Kokkos::Cuda, P>(Call<Kokkos::Cuda>&, const Problem<Kokkos::Cuda, P>&);
LLMK_INSTANTIATE_CUBLASLT(Fp32)
LLMK_INSTANTIATE_CUBLASLT(Bf16)
#undef LLMK_INSTANTIATE_CUBLASLT

}  // namespace llmk::op::matmul_forward
