// The PTX that the CUDA-only kernels of backends/cuda/ share: cp.async's
// 16-byte (and 4-byte) copies and their groups (sm_80 and later), and the
// SFU's 2^x.
// Device code only; each is a trap or a no-op where the architecture lacks
// it, and the host refuses such devices before any launch.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace llmk::backends::ptx {

// 16 bytes global → shared without passing through registers: zeros where
// !valid (a source size of 0; `src` is then not read, but must be an address).
__device__ __forceinline__ void cp_async16(void* dst, const void* src, bool valid) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const auto d = static_cast<std::uint32_t>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src),
               "r"(valid ? 16 : 0));
#else
  (void)dst, (void)src, (void)valid;
  __trap();
#endif
}

// This thread's copies so far as one group. The "memory" clobbers keep the
// compiler from moving shared-memory accesses across the group's edges.
__device__ __forceinline__ void commit_group() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
// Until at most `pending` of this thread's committed groups are in flight.
template <int pending>
__device__ __forceinline__ void wait_group() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(pending) : "memory");
#endif
}

// A wait until at most n of this thread's cp.async groups are in flight, n
// known only at run time (wait_group takes an immediate): a switch up to 7;
// more waits for 7, which is only earlier than needed.
__device__ __forceinline__ void wait_until_pending(const int n) {
  switch (n) {
    case 0: wait_group<0>(); break;
    case 1: wait_group<1>(); break;
    case 2: wait_group<2>(); break;
    case 3: wait_group<3>(); break;
    case 4: wait_group<4>(); break;
    case 5: wait_group<5>(); break;
    case 6: wait_group<6>(); break;
    default: wait_group<7>(); break;
  }
}

// 4 bytes global → shared (a float of a row's statistics), through L1.
__device__ __forceinline__ void cp_async4(void* dst, const void* src) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const auto d = static_cast<std::uint32_t>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(d), "l"(src));
#else
  (void)dst, (void)src;
  __trap();
#endif
}

// 2^x by the SFU (ex2.approx: relative error ≈ 2⁻²², NaN stays NaN, −∞ → 0,
// results below 2⁻¹²⁶ flushed to 0).
__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

}  // namespace llmk::backends::ptx
