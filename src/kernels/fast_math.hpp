// exp, exp2 and tanh for the kernels' element loops.
//
// On a GPU these are the device's own (exp2f is the hardware's ex2): the
// functions below call compat::exp, compat::exp2 and compat::tanh there.
// On a host, glibc's expf, exp2f and tanhf are calls, ~20-30 ns each on a
// thread: GPT-2's fcproj dinp with GELU's factor took 464 ms against fc's
// 239 at B 8, T 256 on 16 Xeon cores (docs/cpu.md). So on hosts they are
// inline arithmetic: a range reduction, a polynomial, the exponent set by
// integer arithmetic. Measured: the GELU factor's cost in GPT-2's fcproj step
// (fcproj + GELU against fc, the same FLOPs) fell from 25 to 10 ms at B 4,
// T 64 on 16 Xeon cores; gelu_backward from 67 to 41 ms at B 8, T 256,
// C 3072 on 2 Zen 4 cores. GCC 12 vectorizes them in a plain loop with
// AVX-512 (not with AVX2 alone: its if-conversion gives up on the selects),
// not inside Kokkos' per-index range loops: the host kernels run them in
// blocks of raw-pointer loops (kernels/host_blocks.hpp).
//
// Accuracy (host; tests/test_fast_math.cpp checks it against double over
// their ranges): exp and exp2 within 3 ulp of the exact value where it is a
// normal float; 0 where it is below float's normals (x < −87.3 for exp: the
// terms of a softmax's sum there are below 1e-38 of its largest);
// +inf above float's range; NaN stays NaN. tanh within 2e-7 absolute
// (relative error grows as |x| → 0: the GELU factor adds t to 1); GELU's
// product x·(1 + tanh u)/2 within 4e-7 relative.
#pragma once

#include <llmk/compat.hpp>

#include <cstdint>

namespace llmk::kernels {

namespace host_math {

// The float whose bits are b.
inline float from_bits(const std::int32_t b) { return __builtin_bit_cast(float, b); }

// round(y) for |y| < 2^22, by adding and subtracting 1.5·2^23 (floorf kept
// GCC 12 from vectorizing the loops around: it is not expanded inline).
inline float round_small(const float y) {
  constexpr float magic = 12582912.0f;
  return (y + magic) - magic;
}

// p · 2^n for a whole n in [−126, 128], 2^n as two factors set by their
// exponent fields: n = 128 (x near float's top) would overflow one.
inline float times_pow2(const float p, const float n) {
  const std::int32_t whole = static_cast<std::int32_t>(n), half = whole >> 1;
  return p * from_bits((half + 127) << 23) * from_bits((whole - half + 127) << 23);
}

// 2^f for |f| ≤ ½: e^(f·ln 2) to degree 7.
inline float exp2_fraction(const float f) {
  constexpr float c1 = 0.6931471805599453f, c2 = 0.2402265069591007f, c3 = 0.0555041086648216f,
                  c4 = 0.0096181291076285f, c5 = 0.0013333558146428f, c6 = 0.0001540353039338f,
                  c7 = 0.0000152527338040f;
  return 1.0f + f * (c1 + f * (c2 + f * (c3 + f * (c4 + f * (c5 + f * (c6 + f * c7))))));
}

// 2^n · 2^f for x = n + f, n = round(x).
inline float exp2(const float x) {
  const float xc = x < -126.0f ? -126.0f : (x > 128.0f ? 128.0f : x);  // NaN: 128, fixed below
  const float n = round_small(xc);
  const float r = times_pow2(exp2_fraction(xc - n), n);  // xc − n exact
  return x != x ? x : (x < -126.0f ? 0.0f : (x >= 128.0f ? __builtin_inff() : r));
}

// 2^n for an integral n in [−126, 127], as a float's exponent bits: one
// factor, where times_pow2 takes two to reach the whole range.
inline float pow2_factor(const float n) {
  return from_bits((static_cast<std::int32_t>(n) + 127) << 23);
}

// exp2 for x ≤ 0 (a softmax's terms, x − max): no upper clamp or overflow
// select, and n ≥ −126, so one factor holds 2^n (as tanh's below). NaN
// through, −inf 0.
inline float exp2_nonpositive(const float x) {
  const float xc = x >= -126.0f ? x : -126.0f;  // NaN: −126, fixed below
  const float n = round_small(xc);
  const float r = exp2_fraction(xc - n) * pow2_factor(n);
  return x != x ? x : (x < -126.0f ? 0.0f : r);
}

// e^r for |r| ≤ ½·ln 2, to degree 7.
inline float exp_fraction(const float r) {
  return 1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6 + r * (1.0f / 24 + r * (1.0f / 120 +
                                                        r * (1.0f / 720 + r * (1.0f / 5040)))))));
}
inline constexpr float kLog2e = 1.4426950408889634f;
inline constexpr float kLn2Hi = 0.693145751953125f, kLn2Lo = 1.428606765330187e-06f;

// e^x = 2^n · e^r, n = round(x·log2 e), r = x − n·ln 2 in two parts (Cody and
// Waite: n·ln2_hi is exact), |r| ≤ ½·ln 2.
inline float exp(const float x) {
  const float xc = x < -87.5f ? -87.5f : (x > 88.8f ? 88.8f : x);
  const float n = round_small(xc * kLog2e);
  const float v = times_pow2(exp_fraction((xc - n * kLn2Hi) - n * kLn2Lo), n);
  return x != x ? x : (x < -87.33654f ? 0.0f : (x > 88.72283f ? __builtin_inff() : v));
}

// e^x for x in [−87.5, 0], exp's steps without its clamps and selects
// (the callers' own): n = round(x·log2 e) ∈ [−126, 0], one factor 2^n.
inline float exp_in_range(const float x) {
  const float n = round_small(x * kLog2e);
  return exp_fraction((x - n * kLn2Hi) - n * kLn2Lo) * pow2_factor(n);
}

// exp for x ≤ 0 (a softmax's terms: x − max, s − lse; exact up to x < 88,
// so a rounding above 0 does no harm): no upper clamp or overflow select,
// and n ≥ −126, so one factor holds 2^n. NaN through, −inf 0.
inline float exp_nonpositive(const float x) {
  const float xc = x >= -87.5f ? x : -87.5f;  // NaN: −87.5, fixed below
  return x != x ? x : (x < -87.33654f ? 0.0f : exp_in_range(xc));
}

// tanh x = sign(x)·(1 − e)/(1 + e), e = e^(−2|x|) ∈ (0, 1], exp's steps
// for an exponent that is never positive: no upper clamp or overflow select,
// and n ≥ −126, so one factor holds 2^n. gelu_backward's arithmetic is
// about as long as its memory traffic on 16 Xeon cores; with these steps its
// loop took 12 µs instead of 17 for 49 K elements in L2 on one Zen 4 core.
inline float tanh(const float x) {
  const float a = x < 0 ? -x : x;
  const float y = a <= 43.5f ? -2.0f * a : -87.0f;  // e ≤ 1.7e-38 below: t is 1 (NaN too)
  const float e = exp_in_range(y);
  const float t = (1.0f - e) / (1.0f + e);
  return x != x ? x : (x < 0 ? -t : t);
}

// x·(1 + tanh u)/2, GELU's product, as x·σ(2u) = x·(u < 0 ? e : 1)/(1 + e),
// e = e^(−2|u|): tanh's steps without its sign, its 1 − e and the 1 + t (no
// cancellation where t → −1: the product keeps its relative accuracy for
// negative u). NaN through (x is NaN where u is).
inline float half_x_one_plus_tanh(const float x, const float u) {
  const float a = u < 0 ? -u : u;
  const float y = a <= 43.5f ? -2.0f * a : -87.0f;  // e ≤ 1.7e-38 below
  const float e = exp_in_range(y);
  return x * (u < 0 ? e : 1.0f) / (1.0f + e);
}

}  // namespace host_math

// The host's versions above in host code, the device's in device code.
KOKKOS_INLINE_FUNCTION float fast_exp(const float x) {
#if defined(__CUDA_ARCH__)
  return compat::exp(x);
#else
  return host_math::exp(x);
#endif
}
KOKKOS_INLINE_FUNCTION float fast_exp2(const float x) {
#if defined(__CUDA_ARCH__)
  return compat::exp2(x);
#else
  return host_math::exp2(x);
#endif
}
// fast_exp and fast_exp2 for x ≤ 0 or NaN (host: host_math's *_nonpositive).
KOKKOS_INLINE_FUNCTION float fast_exp_nonpositive(const float x) {
#if defined(__CUDA_ARCH__)
  return compat::exp(x);
#else
  return host_math::exp_nonpositive(x);
#endif
}
KOKKOS_INLINE_FUNCTION float fast_exp2_nonpositive(const float x) {
#if defined(__CUDA_ARCH__)
  return compat::exp2(x);
#else
  return host_math::exp2_nonpositive(x);
#endif
}
KOKKOS_INLINE_FUNCTION float fast_tanh(const float x) {
#if defined(__CUDA_ARCH__)
  return compat::tanh(x);
#else
  return host_math::tanh(x);
#endif
}

}  // namespace llmk::kernels
