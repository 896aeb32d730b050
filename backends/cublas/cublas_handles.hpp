// cuBLAS and cuBLASLt handles of one context (one CUDA stream): a resource
// attached to the context on first use (ContextState::resource), destroyed
// with it. A handle is used only under its context's lock, so setting its
// stream and math mode per call is safe from several host threads.
#pragma once

#include <Kokkos_Core.hpp>
#include <cublasLt.h>
#include <cublas_v2.h>

#include <map>
#include <tuple>

namespace llmk::backends {

// Throws std::runtime_error naming the call when status is not success.
void check_cublas(cublasStatus_t status, const char* call);

class CublasHandle {
 public:
  explicit CublasHandle(const Kokkos::Cuda& exec);
  ~CublasHandle();
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

class CublasLtHandle {
 public:
  explicit CublasLtHandle(const Kokkos::Cuda& exec);
  ~CublasLtHandle();
  CublasLtHandle(const CublasLtHandle&) = delete;
  CublasLtHandle& operator=(const CublasLtHandle&) = delete;
  cublasLtHandle_t get() const { return handle_; }

  // The heuristic's algorithm choices, per GEMM shape and alignments: asking
  // costs more than a small GEMM.
  std::map<std::tuple<int, int, long long, long long, long long, long long, long long, long long,
                      bool, bool, unsigned, unsigned, unsigned>,
           cublasLtMatmulAlgo_t>
      algos;

 private:
  cublasLtHandle_t handle_ = nullptr;
};

}  // namespace llmk::backends
