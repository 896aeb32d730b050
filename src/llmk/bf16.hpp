// llmk::bf16: bfloat16 storage (1 sign, 8 exponent, 7 mantissa bits: the top
// half of a float32), usable in host and device code. Only a storage type:
// llmk converts to float on load, computes and accumulates in float, and
// rounds once on store. Bit-for-bit the layout of CUDA's __nv_bfloat16 and of
// llm.c's floatX buffers, so their pointers can be passed to llmk without a
// copy (llmk::BufferRef accepts __nv_bfloat16* when <cuda_bf16.h> is included
// before llmk's headers; otherwise reinterpret_cast<llmk::bf16*>).
//
// float → bf16 rounds to nearest, ties to even (as __float2bfloat16_rn); NaN
// stays NaN (quiet; on a GPU the canonical NaN), ±Inf stays ±Inf, values that
// round above bf16's largest finite value become ±Inf. bf16 → float is exact.
// (Kokkos 4's Kokkos::Experimental::bhalf_t is the same format; llmk keeps its
// own type so that one definition serves Kokkos 3.4, which has none, and 4.x.)
#pragma once

#include <Kokkos_Macros.hpp>

#include <cstdint>
#include <cstring>

namespace llmk {

struct alignas(2) bf16 {
  std::uint16_t bits;

  bf16() = default;  // trivial: uninitialized, like float
  KOKKOS_INLINE_FUNCTION explicit bf16(float f) : bits(round(f)) {}
  KOKKOS_INLINE_FUNCTION operator float() const {
    const std::uint32_t u = std::uint32_t(bits) << 16;
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
  }

  KOKKOS_INLINE_FUNCTION static bf16 from_bits(std::uint16_t b) {
    bf16 h;
    h.bits = b;
    return h;
  }

 private:
  KOKKOS_INLINE_FUNCTION static std::uint16_t round(float f) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    // sm_80+ rounds in one instruction, to nearest even like the code below
    // (NaN becomes the canonical quiet NaN, as GPU arithmetic makes it
    // anyway). H200, layernorm_backward bf16 at C = 1600: 63.2 -> 57.8 µs
    // (perf/dev/layernorm_bench.cpp); the integer sequence below is ~5
    // instructions an element.
    std::uint16_t r;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(f));
    return r;
#else
    std::uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u) return std::uint16_t((u >> 16) | 0x0040u);  // quiet NaN
    // Round to nearest even: add 0x7fff plus the lowest kept bit, then truncate.
    // (Carries into the exponent are right: the largest values round to Inf.)
    u += 0x7fffu + ((u >> 16) & 1u);
    return std::uint16_t(u >> 16);
#endif
  }
};

static_assert(sizeof(bf16) == 2 && alignof(bf16) == 2, "bf16 must match __nv_bfloat16's layout");

// Conversions the kernels use on any element type (float or bf16).
KOKKOS_INLINE_FUNCTION float to_float(float x) { return x; }
KOKKOS_INLINE_FUNCTION float to_float(bf16 x) { return float(x); }

template <class T>
KOKKOS_INLINE_FUNCTION T from_float(float x) {
  return T(x);
}

}  // namespace llmk
