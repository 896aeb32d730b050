// What the header of the table and the JSON say about the machine and the
// backend: CPU, GPU, Kokkos, threads, how times were measured, and on a
// device the copy bandwidth that stages' GB/s compare with.
#pragma once

#include "kokkos_compat.hpp"
#include "report.hpp"
#include "timer.hpp"
#include "timing.hpp"

#include <Kokkos_Core.hpp>
#include <llmk/host_blas.hpp>

#ifdef KOKKOS_ENABLE_CUDA
#include <cuda_runtime.h>
#endif

#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace llmk::perf {

std::string cpu_model();  // /proc/cpuinfo's "model name", or "unknown"

// The backends of this Kokkos, lower case as --backend takes them.
std::vector<std::string> compiled_backends();

template <class ExecSpace>
std::optional<std::string> gpu_name(const ExecSpace&) {
  return std::nullopt;
}
#ifdef KOKKOS_ENABLE_CUDA
inline std::optional<std::string> gpu_name(const Kokkos::Cuda& exec) {
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, exec.cuda_device()) != cudaSuccess) return "unknown";
  return std::string(prop.name);
}
#endif

template <class ExecSpace>
constexpr bool on_host =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ExecSpace::memory_space>::accessible;

// A 1 GiB device-to-device copy: bytes read + written per second.
template <class ExecSpace>
double device_copy_gbs(const ExecSpace& exec, const DeviceTimer<ExecSpace>& timer) {
  using Buffer = Kokkos::View<float*, Kokkos::LayoutRight, typename ExecSpace::device_type>;
  const std::int64_t n = std::int64_t(1) << 28;  // 1 GiB of floats
  const Buffer src("llmk-perf::copy_src", n), dst("llmk-perf::copy_dst", n);
  const TimingPlan plan{3, 20, 1.0};
  const Timing t = time_calls(plan, timer, [&] { Kokkos::deep_copy(exec, dst, src); });
  return 2.0 * double(n) * sizeof(float) / (t.ms_median * 1e-3) * 1e-9;
}

template <class ExecSpace>
Machine describe_machine(const ExecSpace& exec, const DeviceTimer<ExecSpace>& timer, int threads) {
  Machine m;
  m.cpu = cpu_model();
  m.threads = threads;
  m.hardware_threads = int(std::thread::hardware_concurrency());
  m.kokkos_version = kokkos_compat::version();
  m.backend = ExecSpace::name();
  m.timer = timer.method();
  const HostBlas blas = host_blas();
  m.host_blas = blas.library + ", " + blas.threading + " threads, kernels " + blas.core +
                (blas.fallback_core ? " (a fallback: see docs/cpu.md)" : "");
  m.gpu = gpu_name(exec);
  if (!on_host<ExecSpace>) m.device_copy_gbs = device_copy_gbs(exec, timer);
  return m;
}

}  // namespace llmk::perf
