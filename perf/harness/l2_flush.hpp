// Flushing the last-level cache between timed calls. On a GPU, a buffer of
// twice the L2 is written before each timed call, so that no call finds its
// inputs in the L2 the previous one left (as perf/torch_baseline.py does).
// Host caches are small next to the data llmk-perf times (dout alone is
// 100 MB at the seed shape): no flush there.
#pragma once

#include <Kokkos_Core.hpp>

#ifdef KOKKOS_ENABLE_CUDA
#include <cuda_runtime.h>
#endif

#include <cstddef>

namespace llmk::perf {

template <class ExecSpace>
std::size_t l2_cache_bytes(const ExecSpace&) {
  return 0;
}
#ifdef KOKKOS_ENABLE_CUDA
inline std::size_t l2_cache_bytes(const Kokkos::Cuda& exec) {
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, exec.cuda_device()) != cudaSuccess) return 0;
  return std::size_t(prop.l2CacheSize);
}
#endif

template <class ExecSpace>
class L2Flush {
 public:
  explicit L2Flush(const ExecSpace& exec)
      : exec_(exec), buffer_("llmk-perf::l2_flush", 2 * l2_cache_bytes(exec)) {}

  std::size_t bytes() const { return buffer_.extent(0); }
  explicit operator bool() const { return bytes() > 0; }

  // Enqueues the write on the instance (nothing on host spaces).
  void operator()() const {
    if (bytes() > 0) Kokkos::deep_copy(exec_, buffer_, static_cast<unsigned char>(0));
  }

 private:
  ExecSpace exec_;
  Kokkos::View<unsigned char*, Kokkos::LayoutRight, typename ExecSpace::device_type> buffer_;
};

}  // namespace llmk::perf
