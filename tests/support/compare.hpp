// gtest assertions around llmk_reference's comparisons (the same for every
// operation: each operation's tolerances are its reference library's).
#pragma once

#include <core/reference/compare.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace llmk_test {

// The one float32 tolerance (its derivation is in core/reference/compare.hpp).
using llmk::reference::kFloat32Tolerance;
// Two float32 results each within kFloat32Tolerance of the exact one are
// within twice that of each other (comparing two backends).
inline constexpr double kFloat32PairTolerance = 2 * kFloat32Tolerance;

// `out` matches `ref` (llmk::reference::compare): the same NaN/Inf positions,
// relative L2 error within `tolerance` over the finite elements. `cols` only
// formats the worst element's index as (row, col) in messages.
::testing::AssertionResult matches_reference(const char* what, const std::vector<float>& out,
                                             const std::vector<double>& ref, std::int64_t cols,
                                             double tolerance = kFloat32Tolerance);
// The same, with a float32 result as the reference (comparing two backends).
::testing::AssertionResult matches_reference(const char* what, const std::vector<float>& out,
                                             const std::vector<float>& ref, std::int64_t cols,
                                             double tolerance = kFloat32PairTolerance);

// A bf16 result (widened to float) rounded ONCE from a float32 sum, as llmk
// promises: each element is the nearest bf16 to the reference (ties to even),
// except where the float32 sum's own error (relative ~1e-6, against bf16's
// half-ulp of 2e-3 to 4e-3; ~1e-5 for sums of 50257 terms) carries it across
// a rounding midpoint: measured 0 to 3 of 23865 elements, 1 of 30 for the
// 50257-term sums. A second rounding (to bf16 before a GELU pass or an
// accumulation, or split-K partial sums stored in bf16) misses the nearest
// value in a large fraction of them (~20-50%), while its relative L2 error
// (≈ 2.2e-3) stays within kBf16Tolerance. Allowed: 2 + n/100 elements.
// Non-finite reference elements are left to matches_reference.
::testing::AssertionResult rounded_once_to_bf16(const char* what, const std::vector<float>& out,
                                                const std::vector<double>& ref, std::int64_t cols);

// A bf16 result against the reference element by element, each within its
// own float32 error bound (bound[i]: how far a correct float32 result may be
// from ref[i] before its rounding to bf16, e.g. matmul's
// float32_error_bounds; NaN where ref is not finite: left to
// matches_reference). `init` holds the output's initial values (empty when it
// was overwritten).
//  - rounds_once (the implementation promises it): the host emulation of one
//    rounding of a float32 result within its bound: each element is the
//    nearest bf16 to a value in [ref − bound, ref + bound], bitwise, no
//    element excepted (the interval holds a rounding midpoint for ~1% of
//    them at K = 8192, where two neighbours are right). One product missing
//    from a sum of 8192 (≈ 1% of it), a second rounding or a wrong element
//    fails it.
//  - not (cuBLAS's split-K partial sums in bf16, a product rounded before an
//    old value is added or DGELU applied): |out − ref| ≤ bound +
//    2⁻⁸·(3·|ref| + 2·|init|), three roundings of values no larger than the
//    result and its initial value (1.5 ulp of the result: an element off by
//    more is wrong, not rounded); and no scale error: the error's projection
//    on the reference, Σ(out − ref)·ref / Σ ref², within 6 standard
//    deviations of the zero-mean errors that bound allows (uniform in ±it):
//    a systematic 0.3% error, which relative L2 lets through (≈ 3.7e-3
//    against kBf16Tolerance's 4e-3), fails it on outputs of ≥ ~2000 elements.
::testing::AssertionResult bf16_within_bounds(const char* what, const std::vector<float>& out,
                                              const std::vector<double>& ref,
                                              const std::vector<double>& bound,
                                              const std::vector<float>& init, bool rounds_once,
                                              std::int64_t cols);

// Bit-for-bit equality (NaN payloads included): "unchanged", "the same as a solo call".
::testing::AssertionResult bitwise_equal(const char* what, const std::vector<float>& actual,
                                         const std::vector<float>& expected);
::testing::AssertionResult bitwise_equal(const char* what, const float* actual,
                                         const float* expected, std::size_t n);
// The same of int32 arrays (tokens, targets): the first element that differs.
::testing::AssertionResult bitwise_equal(const char* what, const std::vector<std::int32_t>& actual,
                                         const std::vector<std::int32_t>& expected);

// The guard bands' value: a signaling NaN. Read as an input it makes the
// results NaN; and arithmetic quiets it (sets its quiet bit; a GPU returns its
// canonical NaN), so even `guard += x`, whose result is NaN like the guard,
// changes its bits. (A quiet NaN would come back bit for bit: x86 keeps the
// payload of the first NaN operand.)
float guard_nan();

}  // namespace llmk_test
