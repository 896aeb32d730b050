// One cuBLAS and one cuBLASLt handle per process, created on first use and
// destroyed at Kokkos::finalize (they must go before the CUDA context does).
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>

namespace llmk::detail {

cublasHandle_t cublas_handle();
cublasLtHandle_t cublaslt_handle();

// Throws std::runtime_error naming the call when status is not success.
void check_cublas(cublasStatus_t status, const char* call);

}  // namespace llmk::detail
