// "cublas" and "cublas_serial": two cublasGemmEx_64 calls on the context's
// stream (inputs float or bf16, outputs of the gradient's own type, float
// accumulation), the dinp output route of cublas_dinp_route, and the shared
// column_sums kernel for dbias: for "cublas" on the context's second stream
// while the GEMMs run (the bias pass only reads dout, which the GEMMs only
// read too; it writes dbias and its own workspace partials, which nothing
// else touches), for "cublas_serial" after them. Layouts: cublas_common.hpp.
#include "cublas_common.hpp"

#include <type_traits>

namespace llmk::op::matmul_backward {
namespace {

using backends::check_cublas;
using backends::cuda_type;

// One column-major GEMM  D (m×n) = A (m×k) · op(B) + beta·D, alpha = 1, where
// A and B have the inputs' type. (A is never transposed here.)
struct GemmEx {
  const char* what;  // names the GEMM in errors
  cublasOperation_t trans_b;
  index_t m, n, k;
  const void* A;
  index_t lda;
  const void* B;
  index_t ldb;
  void* D;
  cudaDataType_t d_type;
  index_t ldd;
  float beta;
};

void launch(cublasHandle_t handle, const GemmEx& g, cudaDataType_t in_type,
            cublasComputeType_t compute) {
  const float one = 1.0f;
  check_cublas(cublasGemmEx_64(handle, CUBLAS_OP_N, g.trans_b, g.m, g.n, g.k, &one, g.A, in_type,
                               g.lda, g.B, in_type, g.ldb, &g.beta, g.D, g.d_type, g.ldd, compute,
                               CUBLAS_GEMM_DEFAULT),
               g.what);
}

// Float32 FMAs unless TF32 was asked for (float inputs only): TF32 misses
// float32 tolerances. bf16 inputs use the tensor cores with float sums.
template <class P>
cublasComputeType_t compute_type(Math math) {
  return std::is_same_v<typename P::in, float> && math == Math::tf32
             ? CUBLAS_COMPUTE_32F_FAST_TF32
             : CUBLAS_COMPUTE_32F;
}

// dinpᵀ (C×M) ⟵ weightᵀ (C×OC) · doutᵀ (OC×M), into where `out` says.
template <class P>
GemmEx dinp_product(const Problem<Kokkos::Cuda, P>& p, const backends::DinpOutput<P>& out) {
  GemmEx g{};
  g.what = "cublasGemmEx (dinp)";
  g.trans_b = CUBLAS_OP_N;
  g.m = p.C, g.n = p.M, g.k = p.OC;
  g.A = p.weight.data(), g.lda = p.C;
  g.B = p.dout.data(), g.ldb = p.OC;
  g.D = out.target(), g.d_type = out.type(), g.ldd = p.C;
  g.beta = out.beta();
  return g;
}

// dweightᵀ (C×OC) ⟵ inpᵀ (C×M) · dout (M×OC), straight into dweight (a bf16
// dweight accumulated is rounded twice: cuBLAS rounds the product first).
template <class P>
GemmEx dweight_product(const Problem<Kokkos::Cuda, P>& p) {
  GemmEx g{};
  g.what = "cublasGemmEx (dweight)";
  g.trans_b = CUBLAS_OP_T;
  g.m = p.C, g.n = p.OC, g.k = p.M;
  g.A = p.inp.data(), g.lda = p.C;
  g.B = p.dout.data(), g.ldb = p.OC;
  g.D = p.dweight.data(), g.d_type = cuda_type<typename P::dweight>(), g.ldd = p.C;
  g.beta = p.overwrite_dweight ? 0.0f : 1.0f;
  return g;
}

}  // namespace

template <class ExecSpace, class P>
void cublas_gemmex_run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p, BiasStream where) {
  static_assert(std::is_same_v<ExecSpace, Kokkos::Cuda>, "cuBLAS runs on Kokkos::Cuda only");
  // Everything that can fail comes first, before any launch: the handle (bound
  // to the context's stream), the side stream, the workspace.
  const cublasHandle_t handle = call.ctx.template resource<backends::CublasHandle>().get();
  backends::SideStream* const side = side_stream(call, where, p.has_bias());
  backends::DinpOutput<P> dinp(p, call.workspace);
  const cudaDataType_t in = cuda_type<typename P::in>();
  const cublasComputeType_t compute = compute_type<P>(call.options.math);
  const GemmEx dinp_gemm = dinp_product(p, dinp);
  const GemmEx dweight_gemm = dweight_product(p);

  ForkJoin fork(side);  // records an event: may throw, still before any launch
  if (side) {
    // First, so that it starts beside the dinp GEMM.
    Call<Kokkos::Cuda> side_call{side->exec(), call.ctx, call.workspace, call.options};
    run_bias_pass(CublasGemmExTraits::bias, side_call, p);
  }
  launch(handle, dinp_gemm, in, compute);
  dinp.finish(call.exec);
  launch(handle, dweight_gemm, in, compute);
  fork.join();
  if (!side && p.has_bias()) run_bias_pass(CublasGemmExTraits::bias, call, p);
}

#define LLMK_INSTANTIATE_CUBLAS(P)                                                               \
  template void cublas_gemmex_run<Kokkos::Cuda, P>(Call<Kokkos::Cuda>&,                         \
                                                   const Problem<Kokkos::Cuda, P>&, BiasStream);
LLMK_INSTANTIATE_CUBLAS(Fp32)
LLMK_INSTANTIATE_CUBLAS(Bf16)
LLMK_INSTANTIATE_CUBLAS(Bf16Fp32Grad)
#undef LLMK_INSTANTIATE_CUBLAS

}  // namespace llmk::op::matmul_backward
