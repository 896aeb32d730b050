// A device buffer reused across calls, so that kernels needing temporary
// storage (the two-level dbias reduction) don't allocate on every call: an
// allocation can cost more than the kernel (cudaMalloc synchronizes the GPU).
//
// One buffer per execution-space type and slot (a kernel needing two buffers at
// once takes two slots), grown on demand, released at
// Kokkos::finalize. Calls that overlap in time on two instances of the same
// space (two CUDA streams) would share it: llmk's entry points are not meant
// to run concurrently on one space type (documented in docs/design.md).
#pragma once

#include <Kokkos_Core.hpp>
#include <llmk/types.hpp>

#include <mutex>

namespace llmk::detail {

template <class ExecSpace, int Slot = 0>
class Workspace {
 public:
  using Buffer = Kokkos::View<float*, Kokkos::LayoutRight, typename ExecSpace::device_type>;

  // A buffer of at least `count` floats (contents unspecified).
  static Buffer get(index_t count) {
    static std::mutex mutex;
    std::lock_guard<std::mutex> lock(mutex);
    Buffer& buf = storage();
    if (index_t(buf.extent(0)) < count) {
      if (!registered()) {
        Kokkos::push_finalize_hook([] {
          storage() = Buffer();
          registered() = false;  // a later Kokkos::initialize starts afresh
        });
        registered() = true;
      }
      buf = Buffer();  // free the old one first
      buf = Buffer(Kokkos::view_alloc(Kokkos::WithoutInitializing, "llmk::workspace"), count);
    }
    return buf;
  }

 private:
  static Buffer& storage() {
    static Buffer buf;
    return buf;
  }
  static bool& registered() {
    static bool flag = false;
    return flag;
  }
};

}  // namespace llmk::detail
