// Comparing a float32 result with the float64 reference (or with another
// float32 result), without a test framework: the tests wrap these in gtest
// assertions (tests/support/compare.hpp), the perf driver prints them. Part of
// llmk_reference, shared by every operation's reference library (which holds
// its tolerances per precision and output: ops/<operation>/reference/compare.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace llmk::reference {

// Relative L2 tolerance of a float32 result against the float64 reference,
// ‖out − ref‖₂ / ‖ref‖₂ ≤ kFloat32Tolerance, for outputs whose elements are
// sums of up to ~10⁵ terms of order 1 accumulated in float32 (which sums each
// operation's outputs are, and what the tolerance catches there, its
// compare.hpp says).
// Derivation: rounding each term and each partial sum of a sum of K terms to
// float32 (unit roundoff u = 2⁻²⁴ ≈ 6e-8) leaves an error that behaves like a
// random walk: relative to the sum, about u·√K whatever the order or blocking
// of the sum. That is 5e-6 at K = 8192 (the seed's and GPT-2 training's
// M = B·T rows) and 1.9e-5 at K = 10⁵. 5e-5 leaves a factor ≥ 2.5 above that.
// Two float32 results each within the tolerance of the exact one are within
// 2·kFloat32Tolerance of each other: compare them with that.
inline constexpr double kFloat32Tolerance = 5e-5;

// bf16 outputs: llmk sums in float32 and rounds once, at the end, to bf16's
// 8 significant bits (u = 2⁻⁸ ≈ 3.9e-3). Where the result x before that
// rounding is within the float32 bound (≤ 5e-5 relative L2,
// kFloat32Tolerance; each operation's compare.hpp says why its bf16 inputs
// keep it there), rounding to nearest moves each element by at most u·|x|,
// so ‖bf16(x) − ref‖ ≤ u·‖x‖ + ‖x − ref‖ ≤ (u + 1.004·5e-5)·‖ref‖: relative
// L2 ≤ 3.96e-3 for ANY data, a hard bound. For random data the rounding
// errors are uniform in ±ulp/2 and the relative L2 is ≈ u·√(1/(3·E[m²])) with
// m the significand in [1, 2): 0.39·u ≈ 1.5e-3 (u/√3 ≈ 2.3e-3 if relative
// errors were uniform in ±u). kBf16Tolerance = 4e-3: above the hard bound (a
// correctly rounded result never fails it), 2.6 times the expected error.
// A second rounding (e.g. a partial result rounded to bf16 before it is
// added) is expected at √2·1.5e-3 ≈ 2.2e-3, within it: the tests check bf16
// outputs element by element for that (tests/support/compare.hpp,
// rounded_once_to_bf16).
inline constexpr double kBf16Tolerance = 4e-3;

// The outcome of compare(); `ok` says it all, the rest explains it.
struct Comparison {
  bool ok = true;
  std::string what;                   // the output's name, as given
  std::size_t size = 0;               // elements compared
  double rel_l2 = 0;                  // over the elements where ref is finite (absolute if ‖ref‖₂ = 0)
  double tolerance = 0;
  std::size_t nonfinite_mismatches = 0;  // elements where out is not NaN/±Inf/finite exactly where ref is
  std::int64_t first_mismatch = -1;      // the first of those, or -1
  std::int64_t worst = -1;               // the finite element with the largest |out − ref|, or -1
  double worst_out = 0, worst_ref = 0;
  std::string message;                // one line: "dinp: relative L2 error 3e-07 (tolerance 5e-05)", or why it failed
};

// `out` matches `ref` when every element is NaN where ref is NaN, the same
// infinity where ref is infinite, finite where ref is finite, and over the
// finite elements ‖out − ref‖₂ / ‖ref‖₂ ≤ tolerance. `cols` > 0 formats
// element indices as (row, col) in the message, 0 as [i].
Comparison compare(const char* what, const float* out, const double* ref, std::size_t n,
                   std::int64_t cols = 0, double tolerance = kFloat32Tolerance);
Comparison compare(const char* what, const float* out, const float* ref, std::size_t n,
                   std::int64_t cols = 0, double tolerance = 2 * kFloat32Tolerance);
// The same on vectors; a size mismatch fails.
Comparison compare(const char* what, const std::vector<float>& out, const std::vector<double>& ref,
                   std::int64_t cols = 0, double tolerance = kFloat32Tolerance);
Comparison compare(const char* what, const std::vector<float>& out, const std::vector<float>& ref,
                   std::int64_t cols = 0, double tolerance = 2 * kFloat32Tolerance);

// A bf16 result, as the uint16 bits of its elements (widened with
// bf16_bits_to_float, bf16.hpp), against the reference or another result.
Comparison compare_bf16(const char* what, const std::uint16_t* out, const double* ref,
                        std::size_t n, std::int64_t cols, double tolerance);
Comparison compare_bf16(const char* what, const std::uint16_t* out, const float* ref,
                        std::size_t n, std::int64_t cols, double tolerance);

// Index of the first element whose bits differ (NaN payloads included), or -1.
std::int64_t first_bitwise_difference(const float* a, const float* b, std::size_t n);
// "element 12 is 0.5 (bits 0x3f000000), expected 0.25 (bits 0x3e800000)"
std::string describe_difference(const float* actual, const float* expected, std::int64_t i);

}  // namespace llmk::reference
