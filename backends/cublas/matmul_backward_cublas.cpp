// "cublas": two cuBLAS sgemm calls with beta = 1 (gradients accumulate) on the
// context's stream, and the shared column-sum kernel for dbias.
//
// cuBLAS is column-major; llmk's row-major matrices are their transposes:
// a row-major R×K matrix is a column-major K×R matrix with leading dimension K.
//   dinp (M×C)     += dout (M×OC) · weight (OC×C)
//     column-major: dinpᵀ (C×M) += weightᵀ (C×OC) · doutᵀ (OC×M)
//   dweight (OC×C) += doutᵀ (OC×M) · inp (M×C)
//     column-major: dweightᵀ (C×OC) += inpᵀ (C×M) · dout (M×OC)
#include "cublas_handles.hpp"

#include <backends/cublas/matmul_backward_cublas.hpp>

namespace llmk::op::matmul_backward {

template <>
void Cublas::run<Kokkos::Cuda, Fp32>(Call<Kokkos::Cuda>& call, const Problem<Kokkos::Cuda, Fp32>& p) {
  using backends::check_cublas;
  // The context's handle, bound to its stream; made (and able to fail) here,
  // before the first launch.
  const cublasHandle_t handle = call.ctx.template resource<backends::CublasHandle>().get();
  // Plain float32 unless TF32 was asked for: TF32 misses float32 tolerances.
  const bool tf32 = call.options.math == Math::tf32;
  check_cublas(cublasSetMathMode(handle, tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH),
               "cublasSetMathMode");
  const DinpOutput<Kokkos::Cuda> dinp(p.dinp, p.overwrite_dinp, p.has_gelu(), call.workspace);
  const float one = 1.0f, dinp_beta = dinp.beta(), dweight_beta = p.overwrite_dweight ? 0.0f : 1.0f;
  check_cublas(cublasSgemm_64(handle, CUBLAS_OP_N, CUBLAS_OP_N, p.C, p.M, p.OC, &one,
                              p.weight.data(), p.C, p.dout.data(), p.OC, &dinp_beta,
                              dinp.target().data(), p.C),
               "cublasSgemm (dinp)");
  dinp.finish(call.exec, p.pre_gelu);
  check_cublas(cublasSgemm_64(handle, CUBLAS_OP_N, CUBLAS_OP_T, p.C, p.OC, p.M, &one,
                              p.inp.data(), p.C, p.dout.data(), p.OC, &dweight_beta,
                              p.dweight.data(), p.C),
               "cublasSgemm (dweight)");
  if (p.has_bias()) run_bias_pass(bias, call, p);
}

}  // namespace llmk::op::matmul_backward
