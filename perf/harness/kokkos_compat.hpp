// The one place where llmk-perf touches Kokkos API that changed between 3.4
// and 4.x (the library has its own, src/llmk/compat.hpp, which is internal).
//  - Kokkos::InitArguments (3.x) was deprecated in 3.7 and removed in 4.3;
//    Kokkos::InitializationSettings exists since 3.7.
//  - ExecSpace::concurrency() is static in 3.x; 4.x makes it a member of the
//    instance (the static one is deprecated, and gone from OpenMP).
//  - the OpenMP backend's thread pool has a fixed capacity: 512 threads in
//    3.4 (OpenMPExec::MAX_THREAD_COUNT) and in 4.x (OpenMPTraits::
//    MAX_THREAD_COUNT); Kokkos 3.4 writes past its pool above that (segfault).
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdio>
#include <memory>
#include <string>

namespace llmk::perf::kokkos_compat {

// Kokkos, initialized for the lifetime of this object (a Kokkos::ScopeGuard).
// threads: the host thread pool of Kokkos' OpenMP backend.
inline std::unique_ptr<Kokkos::ScopeGuard> initialize(int threads) {
#if KOKKOS_VERSION >= 30700
  Kokkos::InitializationSettings settings;
  settings.set_num_threads(threads);
  return std::make_unique<Kokkos::ScopeGuard>(settings);
#else
  Kokkos::InitArguments args;
  args.num_threads = threads;
  return std::make_unique<Kokkos::ScopeGuard>(args);
#endif
}

// The concurrency of an execution-space instance (threads on a host space).
template <class ExecSpace>
int concurrency(const ExecSpace& exec) {
#if KOKKOS_VERSION >= 40000
  return exec.concurrency();
#else
  (void)exec;
  return ExecSpace::concurrency();
#endif
}

// The most threads Kokkos' OpenMP backend accepts (0: no OpenMP backend, no
// limit of Kokkos').
inline constexpr int max_host_threads() {
#if defined(KOKKOS_ENABLE_OPENMP)
  return 512;
#else
  return 0;
#endif
}

// "3.4.01": KOKKOS_VERSION is major·10000 + minor·100 + patch.
inline std::string version() {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%d.%d.%02d", KOKKOS_VERSION / 10000, KOKKOS_VERSION / 100 % 100,
                KOKKOS_VERSION % 100);
  return buf;
}

}  // namespace llmk::perf::kokkos_compat
