// The CUDA resources of one context (one CUDA stream), attached to it on first
// use (ContextState::resource) and destroyed with it: the cuBLAS and cuBLASLt
// handles, and a second stream for work that runs beside the GEMMs. They are
// used only under the context's lock, so calls on one context from several
// host threads never share them at the same time, and calls on distinct
// contexts never share them at all.
#pragma once

#include <backends/cuda/cuda_checks.hpp>

#include <Kokkos_Core.hpp>
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <map>
#include <optional>
#include <tuple>

namespace llmk::backends {

// Throws std::runtime_error naming the call when status is not success
// (check_cuda: backends/cuda/cuda_checks.hpp).
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

// What decides cuBLASLt's algorithm choice for one GEMM (cublas::LtMatmul):
// shape, batches, types, epilogue, the workspace it may use, and the
// alignment of every pointer the heuristic looks at. In cuBLAS's
// column-major terms (cublas::ColumnMajor).
struct LtGemmKey {
  int trans_a, trans_b;
  long long m, n, k, lda, ldb, ldd;
  long long batch, stride_a, stride_b, stride_d;
  int compute, a_type, b_type, d_type;
  unsigned epilogue;
  int bias_type;
  unsigned long long workspace_bytes;
  unsigned align_a, align_b, align_d, align_epilogue;

  auto tie() const {
    return std::tie(trans_a, trans_b, m, n, k, lda, ldb, ldd, batch, stride_a, stride_b, stride_d,
                    compute, a_type, b_type, d_type, epilogue, bias_type, workspace_bytes,
                    align_a, align_b, align_d, align_epilogue);
  }
  bool operator<(const LtGemmKey& other) const { return tie() < other.tie(); }
};

class CublasLtHandle {
 public:
  explicit CublasLtHandle(const Kokkos::Cuda& exec);
  ~CublasLtHandle();
  CublasLtHandle(const CublasLtHandle&) = delete;
  CublasLtHandle& operator=(const CublasLtHandle&) = delete;
  cublasLtHandle_t get() const { return handle_; }

  // The heuristic's algorithm choices (asking costs more than a small GEMM),
  // and its refusals (nullopt: an epilogue cuBLASLt does not run for this
  // key, which the call replaces by a separate pass without asking again).
  std::map<LtGemmKey, std::optional<cublasLtMatmulAlgo_t>> algos;

 private:
  cublasLtHandle_t handle_ = nullptr;
};

// A second stream of the context, with its own Kokkos::Cuda instance, for
// work independent of the GEMMs (the dbias column sums). Work on it is forked
// from the context's stream and joined back to it, so that to the caller the
// call stays one unit on its stream: everything enqueued before the call
// happens before, everything enqueued after waits for both streams.
class SideStream {
 public:
  // Throws std::runtime_error when the stream, its events or its Kokkos
  // instance cannot be made (Kokkos 3.4 makes a Kokkos::Cuda(stream) only on
  // the thread that initialized Kokkos).
  explicit SideStream(const Kokkos::Cuda& exec);
  ~SideStream();
  SideStream(const SideStream&) = delete;
  SideStream& operator=(const SideStream&) = delete;

  // The side stream waits for all the work enqueued so far on the context's stream.
  void fork();
  // The context's stream waits for all the work enqueued so far on the side
  // stream. When that cannot be enqueued, waits for the side stream on the
  // host instead, then throws (join) or returns the error (join_nothrow).
  void join();
  cudaError_t join_nothrow() noexcept;
  const Kokkos::Cuda& exec() const { return *exec_; }

 private:
  void release() noexcept;

  cudaStream_t main_ = nullptr, side_ = nullptr;
  cudaEvent_t forked_ = nullptr, joined_ = nullptr;
  std::optional<Kokkos::Cuda> exec_;
};

// The context's side stream, made on the first call that wants it. When it
// cannot be made (Kokkos 3.4 constructs a Kokkos::Cuda(stream) only on the
// thread that initialized Kokkos), the context does without it for good:
// its calls run serially rather than pay for the failed attempt every time.
class SideStreamSlot {
 public:
  explicit SideStreamSlot(const Kokkos::Cuda& exec) : exec_(exec) {}
  // The side stream, or null when the context has none.
  SideStream* get() noexcept;

 private:
  Kokkos::Cuda exec_;
  std::optional<SideStream> stream_;
  bool failed_ = false;
};

}  // namespace llmk::backends
