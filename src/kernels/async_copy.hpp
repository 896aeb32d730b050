// Asynchronous global → shared-memory copies for the register-tile GEMM's
// staging (kernels/gemm_tiled.hpp, TiledTuning::async_copy): on sm_80 and
// later, cp.async moves 4 or 16 bytes without passing through registers,
// zero-filling what lies outside the matrix (a source size of 0); a thread
// waits for its own copies with wait_all() and the team's barrier then makes
// them visible to all. Elsewhere (host code, older GPUs) the same calls copy
// synchronously, so the kernel has one source.
#pragma once

#include <Kokkos_Core.hpp>

namespace llmk::kernels {

struct AsyncCopy {
  // dst (shared memory, Bytes-aligned) ⟵ src[0 .. Bytes/4) if valid, else
  // zeros (src is then not read, but must still be a valid address).
  template <int Bytes>
  KOKKOS_INLINE_FUNCTION static void copy(float* const dst, const float* const src,
                                          const bool valid) {
    static_assert(Bytes == 4 || Bytes == 16, "cp.async copies 4 or 16 bytes here");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned shared = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    const int size = valid ? Bytes : 0;
    if constexpr (Bytes == 16) {
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared), "l"(src),
                   "r"(size));
    } else {
      asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(shared), "l"(src),
                   "r"(size));
    }
#else
    for (int i = 0; i < Bytes / 4; ++i) dst[i] = valid ? src[i] : 0.0f;
#endif
  }

  // Until this thread's copies have landed.
  KOKKOS_INLINE_FUNCTION static void wait_all() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
  }
};

}  // namespace llmk::kernels
