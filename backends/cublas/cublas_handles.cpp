#include "cublas_handles.hpp"

#include <stdexcept>
#include <string>

namespace llmk::backends {

void check_cublas(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string("llmk: ") + call + " failed: " +
                             cublasGetStatusName(status) + " (" + cublasGetStatusString(status) +
                             ")");
  }
}

CublasHandle::CublasHandle(const Kokkos::Cuda& exec) {
  check_cublas(cublasCreate(&handle_), "cublasCreate");
  // The context's stream, for good: the handle belongs to it.
  const cublasStatus_t status = cublasSetStream(handle_, exec.cuda_stream());
  if (status != CUBLAS_STATUS_SUCCESS) {
    cublasDestroy(handle_);
    check_cublas(status, "cublasSetStream");
  }
}

CublasHandle::~CublasHandle() { cublasDestroy(handle_); }

CublasLtHandle::CublasLtHandle(const Kokkos::Cuda&) {
  check_cublas(cublasLtCreate(&handle_), "cublasLtCreate");
}

CublasLtHandle::~CublasLtHandle() { cublasLtDestroy(handle_); }

}  // namespace llmk::backends
