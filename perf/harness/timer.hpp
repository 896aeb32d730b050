// The device timer: how long work enqueued on an execution-space instance
// takes, measured the one way each backend allows. Every time llmk-perf
// reports (probes, the checked call, warm-up, samples, stages, the device
// copy) comes from here.
//   host spaces: fence, steady_clock, call, fence, steady_clock;
//   Cuda:        CUDA events recorded on the instance's stream around the
//                call: the time on the device, without the launch latency
//                and the cost of the fence that a wall clock adds to a short
//                kernel. The GPU is idle when the call starts, so the host
//                work before its first launch (validation, launches) counts
//                too; with hide_host (llmk-perf --device-time) a kernel that
//                spins ~0.5 ms is queued first, so that the host enqueues the
//                call while the GPU is busy and only the device's work is
//                timed (what a call costs in a stream kept busy, and what
//                torch.profiler's kernel times compare with).
// host_seconds(): how long the last timed call() kept the host, from entering
// to returning. On Cuda that is the host's part of a call (argument checks,
// pointer-kind queries, attribute setting, launches), the GPU's work not
// waited for; on host spaces the call is the work, so it is not reported.
// A call must enqueue its work on the timer's instance (on Cuda: its stream)
// or be synchronous host code.
#pragma once

#include <Kokkos_Core.hpp>

#ifdef KOKKOS_ENABLE_CUDA
#include <cuda_runtime.h>
#endif

#include <chrono>
#include <stdexcept>
#include <string>

namespace llmk::perf {

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

template <class ExecSpace>
class DeviceTimer {
 public:
  // hide_host: Cuda only (a host space's work is the host's).
  explicit DeviceTimer(const ExecSpace& exec, bool /*hide_host*/ = false) : exec_(exec) {}

  std::string method() const { return "wall clock between fences"; }

  void fence() const { exec_.fence(); }

  // Seconds that call() takes, the instance idle before it.
  template <class Call>
  double time(Call&& call) const {
    exec_.fence();
    const auto t0 = std::chrono::steady_clock::now();
    call();
    host_s_ = seconds_since(t0);
    exec_.fence();
    return seconds_since(t0);
  }
  double host_seconds() const { return host_s_; }

 private:
  ExecSpace exec_;
  mutable double host_s_ = 0;
};

#ifdef KOKKOS_ENABLE_CUDA
// Busy for `cycles` clock cycles of one SM: what the host enqueues behind it
// waits, without the host waiting.
__global__ static void llmk_perf_spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

template <>
class DeviceTimer<Kokkos::Cuda> {
 public:
  explicit DeviceTimer(const Kokkos::Cuda& exec, bool hide_host = false)
      : exec_(exec), hide_host_(hide_host) {
    check(cudaEventCreate(&start_), "cudaEventCreate");
    check(cudaEventCreate(&stop_), "cudaEventCreate");
  }
  ~DeviceTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  DeviceTimer(const DeviceTimer&) = delete;
  DeviceTimer& operator=(const DeviceTimer&) = delete;

  std::string method() const {
    return hide_host_ ? "CUDA events on the stream, the host's enqueue hidden behind a busy kernel"
                      : "CUDA events on the stream";
  }

  void fence() const { exec_.fence(); }

  template <class Call>
  double time(Call&& call) const {
    exec_.fence();
    if (hide_host_) {
      llmk_perf_spin<<<1, 1, 0, exec_.cuda_stream()>>>(1000000);  // ~0.5 ms at 2 GHz
      check(cudaGetLastError(), "the spin kernel's launch");
    }
    check(cudaEventRecord(start_, exec_.cuda_stream()), "cudaEventRecord");
    const auto t0 = std::chrono::steady_clock::now();
    call();
    host_s_ = seconds_since(t0);
    check(cudaEventRecord(stop_, exec_.cuda_stream()), "cudaEventRecord");
    check(cudaEventSynchronize(stop_), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
    exec_.fence();  // anything the call left on other streams (none expected)
    return 1e-3 * double(ms);
  }
  double host_seconds() const { return host_s_; }

 private:
  static void check(cudaError_t err, const char* what) {
    if (err != cudaSuccess)
      throw std::runtime_error(std::string("llmk-perf: ") + what + ": " + cudaGetErrorString(err));
  }
  Kokkos::Cuda exec_;
  bool hide_host_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  mutable double host_s_ = 0;
};
#endif

}  // namespace llmk::perf
