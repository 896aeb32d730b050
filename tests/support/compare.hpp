// Comparing results: against the float64 reference, or bit for bit.
#pragma once

#include <gtest/gtest.h>
#include <llmk/matmul_backward.hpp>

#include <cstdint>
#include <ostream>
#include <vector>

namespace llmk_test {

// Relative L2 tolerance of a float32 result against the float64 reference:
// ‖out − ref‖₂ / ‖ref‖₂ ≤ kFloat32Tolerance.
// A float32 sum of K random-sign products has a relative rounding error of
// about u·√K (u = 2⁻²⁴ ≈ 6e-8): 1e-5 for K ≈ 50k, the longest sums here being
// the seed shape's 8192 rows. 5e-5 leaves room for a blocked or reordered
// summation, yet an element left unwritten (it keeps its initial value, which
// misses a sum of size ~√K/3) or one missing product of the sum moves the
// norm by more than that on every shape tested.
inline constexpr double kFloat32Tolerance = 5e-5;

// Two float32 implementations each within kFloat32Tolerance of the exact
// result are within twice that of each other.
inline constexpr double kFloat32PairTolerance = 2 * kFloat32Tolerance;

// `out` matches `ref` when: they have the same size; every element is finite
// where ref is, and NaN where ref is NaN; and over the elements where ref is
// finite ‖out − ref‖₂ / ‖ref‖₂ ≤ tolerance (‖out − ref‖₂ = 0 if ‖ref‖₂ = 0).
// `cols` only formats the worst element's index as (row, col) in messages.
::testing::AssertionResult matches_reference(const char* what, const std::vector<float>& out,
                                             const std::vector<double>& ref, std::int64_t cols,
                                             double tolerance = kFloat32Tolerance);
// The same, with a float32 result as the reference (comparing two backends).
::testing::AssertionResult matches_reference(const char* what, const std::vector<float>& out,
                                             const std::vector<float>& ref, std::int64_t cols,
                                             double tolerance);

// Bit-for-bit equality (NaN payloads included): "unchanged".
::testing::AssertionResult bitwise_equal(const char* what, const std::vector<float>& actual,
                                         const std::vector<float>& expected);

// The guard bands' value: a signaling NaN. Read as an input it makes the
// results NaN; and arithmetic quiets it (sets its quiet bit; a GPU returns its
// canonical NaN), so even `guard += x`, whose result is NaN like the guard,
// changes its bits. (A quiet NaN would come back bit for bit: x86 keeps the
// payload of the first NaN operand.)
float guard_nan();

}  // namespace llmk_test

namespace llmk {
// How gtest prints an llmk::Impl parameter: its name, not its bytes. (gtest
// finds PrintTo by argument-dependent lookup, so it is in the enum's namespace.)
inline void PrintTo(Impl impl, std::ostream* os) { *os << impl_name(impl); }
}  // namespace llmk
