// The one place where llmk touches Kokkos API that changed between 3.4 and 4.x.
// Everything else in llmk is written to the API that is stable across them.
// (Internal: not installed.)
#pragma once

#include <Kokkos_Core.hpp>

#include <type_traits>

#if KOKKOS_VERSION >= 40000
#define LLMK_KOKKOS_4 1
#else
#define LLMK_KOKKOS_4 0
#endif

namespace llmk::compat {

// Kokkos 3.4 has exec.fence() only; 4.x adds fence(const std::string& label).
template <class ExecSpace>
void fence(const ExecSpace& exec) {
  exec.fence();
}

template <class ExecSpace>
constexpr bool is_host_space =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ExecSpace::memory_space>::accessible;

// Kokkos 3's host spaces keep their state per space, not per instance (Serial's
// team scratch is one global buffer), so two calls on two "instances" of them
// would share it: llmk serializes such calls. Kokkos 4 gives every host
// instance its own state (Kokkos::Serial(Kokkos::NewInstance), partitions of
// OpenMP), and Cuda instances are streams in either.
template <class ExecSpace>
constexpr bool instances_share_state = !LLMK_KOKKOS_4 && is_host_space<ExecSpace>;

// An identity of an execution-space instance: equal for instances that share
// their state (and so may share a context), distinct otherwise.
template <class ExecSpace>
const void* instance_key(const ExecSpace& exec) {
#ifdef KOKKOS_ENABLE_CUDA
  if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>) {
    return static_cast<const void*>(exec.cuda_stream());
  } else
#endif
  if constexpr (instances_share_state<ExecSpace>) {
    (void)exec;
    return nullptr;
  } else {
    return static_cast<const void*>(exec.impl_internal_space_instance());
  }
}

// Whether a kernel can be launched on ExecSpace from the calling thread now;
// when not, `why` says what stops it. Kokkos throws on such a launch, and
// llmk asks first so that a call fails before its first write, not midway.
template <class ExecSpace>
bool can_launch_here(const char*& why) {
  if (!Kokkos::is_initialized()) {
    why = "Kokkos is not initialized (or already finalized)";
    return false;
  }
#if defined(KOKKOS_ENABLE_OPENMP) && !LLMK_KOKKOS_4
  // Kokkos 3's OpenMP launches only from the thread that initialized it, and
  // not from inside an OpenMP parallel region (OpenMP::in_parallel() is true
  // on every other thread). Kokkos 4 launches from any thread.
  if constexpr (std::is_same_v<ExecSpace, Kokkos::OpenMP>) {
    if (Kokkos::OpenMP::in_parallel()) {
      why = "Kokkos 3's OpenMP launches kernels only from the thread that initialized Kokkos, "
            "outside OpenMP parallel regions, and this is not that thread";
      return false;
    }
  }
#endif
  return true;
}

}  // namespace llmk::compat

namespace llmk::compat {

// Whether ExecSpace is Kokkos::Cuda, in builds with or without CUDA.
template <class ExecSpace>
constexpr bool is_cuda =
#ifdef KOKKOS_ENABLE_CUDA
    std::is_same_v<ExecSpace, Kokkos::Cuda>;
#else
    false;
#endif

}  // namespace llmk::compat

namespace llmk::compat {

// tanh in host and device code: Kokkos 4 has Kokkos::tanh, Kokkos 3.4 only
// Kokkos::Experimental::tanh.
KOKKOS_INLINE_FUNCTION float tanh(const float x) {
#if LLMK_KOKKOS_4
  return Kokkos::tanh(x);
#else
  return Kokkos::Experimental::tanh(x);
#endif
}

// exp, exp2, sqrt and log in host and device code, likewise.
KOKKOS_INLINE_FUNCTION float exp(const float x) {
#if LLMK_KOKKOS_4
  return Kokkos::exp(x);
#else
  return Kokkos::Experimental::exp(x);
#endif
}
KOKKOS_INLINE_FUNCTION float exp2(const float x) {
#if LLMK_KOKKOS_4
  return Kokkos::exp2(x);
#else
  return Kokkos::Experimental::exp2(x);
#endif
}
KOKKOS_INLINE_FUNCTION float sqrt(const float x) {
#if LLMK_KOKKOS_4
  return Kokkos::sqrt(x);
#else
  return Kokkos::Experimental::sqrt(x);
#endif
}
KOKKOS_INLINE_FUNCTION float log(const float x) {
#if LLMK_KOKKOS_4
  return Kokkos::log(x);
#else
  return Kokkos::Experimental::log(x);
#endif
}

}  // namespace llmk::compat
