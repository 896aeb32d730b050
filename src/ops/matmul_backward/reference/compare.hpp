// Comparing a float32 result with the float64 reference (or with another
// float32 result), without a test framework: the tests wrap these in gtest
// assertions (tests/support/compare.hpp), the perf driver prints them.
#pragma once

#include <ops/matmul_backward/reference/problem.hpp>

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

// The other precisions (Precision, problem.hpp). Same measure: relative L2
// over an output's finite elements against the float64 reference computed
// from the very inputs llmk receives (bf16-representable ones in a bf16
// problem). For a sum of K random-sign products p_k = a_k·b_k of values of
// order 1 (|a|, |b| uniform in (0, 1]: E[p²] = 1/9) on top of an initial
// value (E[init²] = 1/3), ‖ref‖ per element ≈ √(1/3 + K/9), so one product
// missing from every sum moves the relative L2 by 1/√(3 + K): ≥ 0.0218 for
// every sum of the test shapes (K ≤ 2100), 0.0045 for K = 50257. An element
// left unwritten is off by its whole sum (relative error ~1 on that element).
//
// tf32 (Math::tf32, float32 inputs, every output): the tensor cores see the
// inputs with 10 mantissa bits (u = 2⁻¹¹ ≈ 4.9e-4): rounded to nearest,
// |δ| ≤ 2⁻¹¹ per input; truncated (some paths drop the 13 low bits),
// δ ∈ (−2⁻¹⁰, 0]. A product then has relative error δa + δb and a sum of
// products, accumulated in float32, Σ p_k(δa_k + δb_k): with random signs its
// random part grows like the sum itself (a random walk of the same terms), so
// the relative L2 is about rms(δa + δb), whatever K: for values spread over a
// binade, 0.58·u ≈ 2.8e-4 rounded; truncated 1.52·u ≈ 7.4e-4 (mostly the
// bias −2·ln2·u ≈ −6.8e-4, which scales every sum alike). Per product the
// error is at most 2⁻¹⁰ (rounded) or 2⁻⁹ ≈ 2.0e-3 (truncated). dbias, a sum
// of dout alone, has at most half of that. Float32 accumulation adds
// ≤ 2e-5. kTf32Tolerance = 2.5e-3: a factor 3.4 above the truncated
// estimate (9 above rounded), above the per-product bound of either; 8.7
// times below a missing product (1/√(3 + K), K ≤ 2100). (And a TF32 result
// fails kFloat32Tolerance by a factor ≥ 5: fp32 tests catch a silent TF32.)
inline constexpr double kTf32Tolerance = 2.5e-3;
//
// bf16 outputs (every output in "bf16", dinp in "bf16-fp32grad"): llmk sums
// in float32 and rounds once, at the end, to bf16's 8 significant bits
// (u = 2⁻⁸ ≈ 3.9e-3). bf16 inputs are exact in the reference, and a product
// of two bf16 values (8 × 8 significant bits) is exact in float32, so before
// that rounding the result x is within the float32 bound (≤ 5e-5 relative
// L2, kFloat32Tolerance). Rounding to nearest moves each element by at most
// u·|x|, so ‖bf16(x) − ref‖ ≤ u·‖x‖ + ‖x − ref‖ ≤ (u + 1.004·5e-5)·‖ref‖:
// relative L2 ≤ 3.96e-3 for ANY data, a hard bound. For random data the
// rounding errors are uniform in ±ulp/2 and the relative L2 is
// ≈ u·√(1/(3·E[m²])) with m the significand in [1, 2): 0.39·u ≈ 1.5e-3
// (u/√3 ≈ 2.3e-3 if relative errors were uniform in ±u).
// kBf16Tolerance = 4e-3: above the hard bound (a correctly rounded result
// never fails it), 2.6 times the expected error; 5.4 times below a missing
// product for K ≤ 2100. What it cannot see: one product of 50257 (the test
// shape "wideOC": measured 2.5e-3 before rounding, 3.1e-3 after) or one
// unwritten row of 50257, under the rounding noise (fp32 sees both; the
// tests' poisoned overwritten outputs show unwritten elements in every
// precision); a second rounding (e.g. the product rounded to bf16 before it
// is added), expected √2·1.5e-3 ≈ 2.2e-3 (the tests check bf16 outputs
// element by element for that: tests/support/compare.hpp, rounded_once_to_bf16).
// Measured on the tests' shapes (tests/test_reference.cpp simulates them):
// one bf16 rounding 0.9-2.2e-3; TF32 rounded 1.2-3.1e-4, truncated 2.5-8.1e-4.
inline constexpr double kBf16Tolerance = 4e-3;
//
// bf16 inputs with float32 outputs (dweight, dbias in "bf16-fp32grad"):
// exact products, float32 sums: kFloat32Tolerance.

// The tolerance of `output` computed in `precision` against the float64
// reference (one of the three above).
double tolerance(Precision precision, Output output);
// Two results of the same problem, each within tolerance() of the exact one,
// are within twice that of each other (comparing two backends).
double pair_tolerance(Precision precision, Output output);

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
// bf16_bits_to_float, problem.hpp), against the reference or another result.
Comparison compare_bf16(const char* what, const std::uint16_t* out, const double* ref,
                        std::size_t n, std::int64_t cols, double tolerance);
Comparison compare_bf16(const char* what, const std::uint16_t* out, const float* ref,
                        std::size_t n, std::int64_t cols, double tolerance);

// Index of the first element whose bits differ (NaN payloads included), or -1.
std::int64_t first_bitwise_difference(const float* a, const float* b, std::size_t n);
// "element 12 is 0.5 (bits 0x3f000000), expected 0.25 (bits 0x3e800000)"
std::string describe_difference(const float* actual, const float* expected, std::int64_t i);

}  // namespace llmk::reference
