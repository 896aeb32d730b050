// The tolerances of llmk::matmul_backward's outputs against the float64
// reference (reference.hpp). The measure, the comparison and the constants
// kFloat32Tolerance and kBf16Tolerance are llmk_reference's
// (core/reference/compare.hpp, included here for every caller, with the
// derivation of each for sums of K terms); what follows is why they fit this
// operation, and its own kTf32Tolerance.
#pragma once

#include <core/reference/compare.hpp>
#include <ops/matmul_backward/reference/problem.hpp>
#include <ops/matmul_backward/reference/reference.hpp>

namespace llmk::reference {

// fp32: kFloat32Tolerance = 5e-5, for every output of every shape the tests
// and the perf driver run. Each output element is a sum of K products of
// values of order 1 (K = OC for dinp, M for dweight and dbias): u·√K is 5e-6
// at the seed shape's longest sum (K = M = 8192) and 1.9e-5 at K = 10⁵ (e.g.
// GPT-2's LM head, OC = 50304, with M up to 10⁵). It fails:
//  - an element left unwritten (it keeps its initial value, off by the whole
//    sum, ~√K/3) or a product missing from a sum: the norm moves by ≥ 1e-3
//    on every shape tested;
//  - TF32 (10 mantissa bits, u = 2⁻¹¹ ≈ 5e-4 on each input): ≈ 5e-4.
//
// The other precisions (Precision, core/reference/precision.hpp). Same
// measure: relative L2 over an output's finite elements against the float64
// reference computed from the very inputs llmk receives (bf16-representable
// ones in a bf16 problem). For a sum of K random-sign products p_k = a_k·b_k
// of values of order 1 (|a|, |b| uniform in (0, 1]: E[p²] = 1/9) on top of an
// initial value (E[init²] = 1/3), ‖ref‖ per element ≈ √(1/3 + K/9), so one
// product missing from every sum moves the relative L2 by 1/√(3 + K): ≥ 0.0218
// for every sum of the test shapes (K ≤ 2100), 0.0045 for K = 50257. An
// element left unwritten is off by its whole sum (relative error ~1 on that
// element).
//
// tf32 (Math::tf32, float32 inputs, every output): the tensor cores see the
// inputs with 10 mantissa bits (u = 2⁻¹¹ ≈ 4.9e-4): rounded to nearest,
// |δ| ≤ 2⁻¹¹ per input; truncated (some paths drop the 13 low bits),
// δ ∈ (−2⁻¹⁰, 0]. A product then has relative error δa + δb and a sum of
// products, accumulated in float32, Σ p_k(δa_k + δb_k): with random signs its
// random part grows like the sum itself (a random walk of the same terms), so
// the relative L2 is about rms(δa + δb), whatever K: for values spread over a
// binade, 0.58·u ≈ 2.8e-4 rounded; truncated 1.52·u ≈ 7.4e-4 (mostly the
// bias −2·ln2·u ≈ −6.8e-4, which scales every sum alike). Inputs rounded to
// bf16 instead (7 mantissa bits, u = 2⁻⁸: bf16 math where TF32 was asked
// for) give 0.58·2⁻⁸ ≈ 2.3e-3 (measured 2.0-2.3e-3 on the test shapes).
// dbias, a sum of dout alone, has at most half of that. Float32 accumulation
// adds ≤ 2e-5. kTf32Tolerance = 1.25e-3, between the two: 1.5 times the
// largest truncated TF32 measured (8.1e-4), 1.6 times below the smallest
// bf16 one (2.0e-3; ToleranceIsTight simulates both on every test shape), and
// 9 times below a missing product (1/√(3 + K) = 0.011 for K ≤ 8192). It cannot
// tell TF32 from plain fp32 (more accurate, it passes any tolerance): a
// result that only TF32 makes does (MatmulTf32, test_matmul_backward.cpp).
// (And a TF32 result fails kFloat32Tolerance by a factor ≥ 5: fp32 tests
// catch a silent TF32.) Before: 2.5e-3, which bf16 math passed.
inline constexpr double kTf32Tolerance = 1.25e-3;
//
// bf16 outputs (every output in "bf16", dinp in "bf16-fp32grad"):
// kBf16Tolerance = 4e-3, the hard bound of one rounding of a float32 result
// within kFloat32Tolerance (core/reference/compare.hpp). bf16 inputs are
// exact in the reference, and a product of two bf16 values (8 × 8
// significant bits) is exact in float32, so before that rounding the result
// is within the float32 bound. 4e-3 is 5.4 times below a missing product for
// K ≤ 2100. What it cannot see: one product of 50257 (the test shape
// "wideOC": measured 2.5e-3 before rounding, 3.1e-3 after) or one unwritten
// row of 50257, under the rounding noise (fp32 sees both; the tests' poisoned
// overwritten outputs show unwritten elements in every precision); a second
// rounding (core/reference/compare.hpp).
// Measured on the tests' shapes (tests/test_reference.cpp simulates them):
// one bf16 rounding 0.9-2.2e-3; TF32 rounded 1.2-3.1e-4, truncated 2.5-8.1e-4.
// The L2 measure lets a few elements be entirely wrong (at K = 8192, ~86 of
// dinp's); the tests therefore also check every bf16 element against its own
// bound (float32_error_bounds below, tests/support/compare.hpp).
//
// bf16 inputs with float32 outputs (dweight, dbias in "bf16-fp32grad"):
// exact products, float32 sums: kFloat32Tolerance.

// Per element of each output, how far a correct float32 result may be from
// the float64 reference `ref` of p (reference_backward with `updates`)
// BEFORE a final rounding to bf16: the error model of an element that is a
// sum of K products t_k (K = OC for dinp, M for dweight and dbias), each
// exact in float32 (bf16 inputs) or rounded once, added in float32 in any
// order, blocking or split: each addition rounds its partial sum S_j by
// |δ_j| ≤ u = 2⁻²⁴, and with random-sign terms (the tests' problems) the
// partial sums grow like a random walk, |S_j| ≈ √j·rms(t), so the error
// Σ δ_j·S_j has a standard deviation of u·√(K/6)·‖t‖₂ (δ uniform). Bound:
// 10 of those, + 2u·(|ref| + |init|) for GELU's product and the initial
// value's addition, + 2e-6·|s| for gelu' computed in float (its tanhf the
// device's; s = the sum before the factor). ‖t‖₂ comes from the reference of
// the squared problem (dout², inp², weight²: Σ t_k²), so this costs one more
// reference call. NaN where ref is not finite. At K = 8192 it is ≈ 2e-5 of
// an element (without GELU), a hundredth of bf16's half ulp: one product
// missing (≈ 1% of a sum) moves nearly every element outside it.
Gradients64 float32_error_bounds(const HostProblem& p, const Gradients64& ref,
                                 const Updates& updates = {});

// The tolerance of `output` computed in `precision` against the float64
// reference (one of the three above).
double tolerance(Precision precision, Output output);
// Two results of the same problem, each within tolerance() of the exact one,
// are within twice that of each other (comparing two backends).
double pair_tolerance(Precision precision, Output output);

}  // namespace llmk::reference
