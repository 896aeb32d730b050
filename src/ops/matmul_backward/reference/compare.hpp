// Comparing a float32 result with the float64 reference (or with another
// float32 result), without a test framework: the tests wrap these in gtest
// assertions (tests/support/compare.hpp), the perf driver prints them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace llmk::reference {

// Relative L2 tolerance of a float32 result against the float64 reference,
// ‖out − ref‖₂ / ‖ref‖₂ ≤ kFloat32Tolerance, for every output of every shape
// the tests and the perf driver run (sums of up to ~10⁵ terms).
// Derivation: each output element is a sum of K products of values of order 1
// (K = OC for dinp, M for dweight and dbias). Rounding each product and each
// partial sum to float32 (unit roundoff u = 2⁻²⁴ ≈ 6e-8) leaves an error that
// behaves like a random walk: relative to the sum, about u·√K whatever the
// order or blocking of the sum. That is 5e-6 at the seed shape's longest sum
// (K = M = 8192) and 1.9e-5 at K = 10⁵ (e.g. GPT-2's LM head, OC = 50304,
// with M up to 10⁵). 5e-5 leaves a factor ≥ 2.5 above that, yet fails:
//  - an element left unwritten (it keeps its initial value, off by the whole
//    sum, ~√K/3) or a product missing from a sum: the norm moves by ≥ 1e-3
//    on every shape tested;
//  - TF32 (10 mantissa bits, u = 2⁻¹¹ ≈ 5e-4 on each input): ≈ 5e-4.
// Two float32 results each within the tolerance of the exact one are within
// 2·kFloat32Tolerance of each other: compare them with that.
inline constexpr double kFloat32Tolerance = 5e-5;

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

// Index of the first element whose bits differ (NaN payloads included), or -1.
std::int64_t first_bitwise_difference(const float* a, const float* b, std::size_t n);
// "element 12 is 0.5 (bits 0x3f000000), expected 0.25 (bits 0x3e800000)"
std::string describe_difference(const float* actual, const float* expected, std::int64_t i);

}  // namespace llmk::reference
