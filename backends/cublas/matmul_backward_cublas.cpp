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
void Cublas::run<Kokkos::Cuda>(Call<Kokkos::Cuda>& call, const Problem<Kokkos::Cuda>& p) {
  using backends::check_cublas;
  // The context's handle, bound to its stream; made (and able to fail) here,
  // before the first launch.
  const cublasHandle_t handle = call.ctx.template resource<backends::CublasHandle>().get();
  // Plain float32 unless TF32 was asked for: TF32 misses float32 tolerances.
  check_cublas(cublasSetMathMode(handle, call.options.allow_tf32 ? CUBLAS_TF32_TENSOR_OP_MATH
                                                                 : CUBLAS_DEFAULT_MATH),
               "cublasSetMathMode");
  const float one = 1.0f;
  check_cublas(cublasSgemm_64(handle, CUBLAS_OP_N, CUBLAS_OP_N, p.C, p.M, p.OC, &one,
                              p.weight.data(), p.C, p.dout.data(), p.OC, &one, p.dinp.data(), p.C),
               "cublasSgemm (dinp)");
  check_cublas(cublasSgemm_64(handle, CUBLAS_OP_N, CUBLAS_OP_T, p.C, p.OC, p.M, &one,
                              p.inp.data(), p.C, p.dout.data(), p.OC, &one, p.dweight.data(),
                              p.C),
               "cublasSgemm (dweight)");
  if (p.has_bias()) run_bias_pass(bias, call, p.dbias, p.dout);
}

}  // namespace llmk::op::matmul_backward
