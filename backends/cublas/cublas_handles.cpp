#include "cublas_handles.hpp"

#include <Kokkos_Core.hpp>

#include <mutex>
#include <stdexcept>
#include <string>

namespace llmk::detail {
namespace {

std::mutex handle_mutex;
cublasHandle_t blas = nullptr;
cublasLtHandle_t lt = nullptr;
bool hook_registered = false;

void destroy_handles() {
  std::lock_guard<std::mutex> lock(handle_mutex);
  if (blas) cublasDestroy(blas);
  if (lt) cublasLtDestroy(lt);
  blas = nullptr;
  lt = nullptr;
  hook_registered = false;  // a later Kokkos::initialize starts afresh
}

void register_hook_locked() {
  if (!hook_registered) {
    Kokkos::push_finalize_hook(destroy_handles);
    hook_registered = true;
  }
}

}  // namespace

void check_cublas(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string("llmk: ") + call + " failed: " +
                             cublasGetStatusName(status) + " (" + cublasGetStatusString(status) +
                             ")");
  }
}

cublasHandle_t cublas_handle() {
  std::lock_guard<std::mutex> lock(handle_mutex);
  if (!blas) {
    check_cublas(cublasCreate(&blas), "cublasCreate");
    register_hook_locked();
  }
  return blas;
}

cublasLtHandle_t cublaslt_handle() {
  std::lock_guard<std::mutex> lock(handle_mutex);
  if (!lt) {
    check_cublas(cublasLtCreate(&lt), "cublasLtCreate");
    register_hook_locked();
  }
  return lt;
}

}  // namespace llmk::detail
