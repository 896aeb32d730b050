#include "cublas_handles.hpp"

#include <exception>
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
  cublasStatus_t status = cublasSetStream(handle_, exec.cuda_stream());
  // Each GEMM names its compute type (TF32 or not); what the math mode adds:
  // a GEMM with bf16 outputs sums its split-K partials in float, not in bf16.
  // With cuBLAS's default, dinp at K = 2050 and 8192 in bf16 came out up to
  // 3.8 bf16 ulps from the float64 reference on the H200, beyond the three
  // roundings a float sum allows (tests' element-wise bounds); cuBLASLt's
  // calls ask the same through their reduction-scheme preference (gemm_lt.cpp).
  if (status == CUBLAS_STATUS_SUCCESS)
    status = cublasSetMathMode(handle_, static_cast<cublasMath_t>(
                                            CUBLAS_DEFAULT_MATH |
                                            CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION));
  if (status != CUBLAS_STATUS_SUCCESS) {
    cublasDestroy(handle_);
    check_cublas(status, "cublasSetStream / cublasSetMathMode");
  }
}

CublasHandle::~CublasHandle() { cublasDestroy(handle_); }

CublasLtHandle::CublasLtHandle(const Kokkos::Cuda&) {
  check_cublas(cublasLtCreate(&handle_), "cublasLtCreate");
}

CublasLtHandle::~CublasLtHandle() { cublasLtDestroy(handle_); }

SideStream::SideStream(const Kokkos::Cuda& exec) : main_(exec.cuda_stream()) {
  try {
    const DeviceScope device(exec.cuda_device());
    // Non-blocking: the legacy default stream must not serialize it with
    // other work; its order with the context's stream is only fork/join.
    check_cuda(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking), "cudaStreamCreate");
    // Events only order the streams: no timing, which makes them cheaper.
    check_cuda(cudaEventCreateWithFlags(&forked_, cudaEventDisableTiming), "cudaEventCreate");
    check_cuda(cudaEventCreateWithFlags(&joined_, cudaEventDisableTiming), "cudaEventCreate");
    exec_.emplace(side_);  // Kokkos 3.4 throws here off the initializing thread
  } catch (...) {
    release();
    throw;
  }
}

SideStream::~SideStream() { release(); }

void SideStream::release() noexcept {
  // The Kokkos instance first: it uses the stream (it does not own it). Work
  // still pending on the stream completes after cudaStreamDestroy returns.
  exec_.reset();
  if (joined_) cudaEventDestroy(joined_);
  if (forked_) cudaEventDestroy(forked_);
  if (side_) cudaStreamDestroy(side_);
  joined_ = forked_ = nullptr;
  side_ = nullptr;
}

void SideStream::fork() {
  check_cuda(cudaEventRecord(forked_, main_), "cudaEventRecord (fork to the side stream)");
  check_cuda(cudaStreamWaitEvent(side_, forked_, 0), "cudaStreamWaitEvent (side stream)");
}

cudaError_t SideStream::join_nothrow() noexcept {
  cudaError_t status = cudaEventRecord(joined_, side_);
  if (status == cudaSuccess) status = cudaStreamWaitEvent(main_, joined_, 0);
  // Unjoined, later work on the context's stream (the next call, which
  // reuses the workspace) could overtake the side stream's: wait here.
  if (status != cudaSuccess) cudaStreamSynchronize(side_);
  return status;
}

void SideStream::join() {
  check_cuda(join_nothrow(), "joining the side stream (cudaEventRecord, cudaStreamWaitEvent)");
}

SideStream* SideStreamSlot::get() noexcept {
  if (!stream_ && !failed_) {
    try {
      stream_.emplace(exec_);
    } catch (const std::exception&) {
      failed_ = true;  // nothing was enqueued: the calls run serially instead
    }
  }
  return stream_ ? &*stream_ : nullptr;
}

}  // namespace llmk::backends
