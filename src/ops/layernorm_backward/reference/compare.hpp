// The tolerances of llmk::layernorm_backward's outputs against the float64
// reference (reference.hpp). The measure, the comparison and the constants
// are llmk_reference's (core/reference/compare.hpp); what follows is why they
// fit this operation.
#pragma once

#include <core/reference/compare.hpp>
#include <ops/layernorm_backward/reference/problem.hpp>

namespace llmk::reference::layernorm {

// Relative L2 over an output's finite elements, against the float64
// reference computed from the very inputs llmk receives (bf16-representable
// ones in a bf16 problem) and the same float mean and rstd.
//
// fp32 (every output of "fp32"; dweight and dbias of "bf16-fp32grad"):
// kFloat32Tolerance = 5e-5, which bounds sums of up to ~10⁵ terms:
//  - dinp: per row two means over C (of dnorm and of dnorm ⊙ norm, terms of
//    rms ≈ 1/3 and random signs), then a few float32 operations per element.
//    A mean's rounding error is a random walk of steps u·|partial sum| ≈
//    u·√k/3, k = 1…C: ≈ u·C/(3√2) in the sum, u/(3√2) once divided by C, the
//    size of one rounding of the element itself whatever C. So dinp's error
//    is a few u (u = 2⁻²⁴ ≈ 6e-8) and does not grow with C. Nor is it
//    amplified by cancellation: the bracket dnorm − mean_c(dnorm) −
//    norm·mean_c(dnorm ⊙ norm) is dnorm less its components along (1, …, 1)
//    and along norm (which has mean 0 and mean square var/(var + 1e-5) ≈ 1),
//    ≈ √((C − 2)/C) of dnorm's size for C ≥ 3; for C = 1 it is 0 in any
//    arithmetic (norm = 0, and dnorm − dnorm/1 = 0). (C = 2 cancels: the
//    bracket is (dnorm₁ − dnorm₂)/2·(1 − norm²) with 1 − norm² =
//    1e-5/(var + 1e-5), ill-conditioned; no test shape has C = 2.)
//  - dweight, dbias: sums over the M rows, u·√M relative: 5e-6 at GPT-2's
//    M = 8192.
// Measured with float32 loops (tests/test_layernorm_reference.cpp, each row's
// sums and each column's sum over the rows in order, on the test shapes and
// GPT-2's): dinp 3.7-7.5e-8; dweight and dbias ≤ 1e-6 up to M = 2100, 1.7e-6
// at M = 8192. The largest is 29 times below the tolerance.
//
// bf16 outputs (all three of "bf16", dinp of "bf16-fp32grad"):
// kBf16Tolerance = 4e-3, the hard bound of one rounding of a result within
// kFloat32Tolerance. The bf16 inputs are exact in the reference, and dnorm
// = dout·weight, a product of two bf16 values, is exact in float32; the rest
// is the float32 arithmetic above. Expected ≈ 1.5e-3 (core/reference/
// compare.hpp); measured 0.7-2.1e-3 (and 2.8e-3 on the one dbias element of
// the shape C1, under the bound of 3.96e-3 that holds for any data).
//
// What they catch, for make_problem's random problems (E[dout²] = E[weight²]
// = E[init²] = 1/3, norm's mean square ≈ 1, E[rstd²] = 3 for row scales
// uniform in [0.5, 2)); measured on accumulated outputs, whose initial values
// make errors harder to see:
//  - a row missing from the column sums (dweight, dbias): each row adds 1/3
//    to an element's mean square, as much as its initial value, so the
//    relative L2 moves by ≈ 1/√(1 + M): 0.011 at GPT-2's M = 8192 (measured
//    the same), 2.7 × kBf16Tolerance, 220 × kFloat32Tolerance; 0.018-0.03 at
//    M = 2100 (longM). (With C = 1, norm = 0: dweight's terms are 0, there is
//    nothing to miss.)
//  - dinp without mean_c(dnorm): each element off by rstd·mean_c(dnorm)
//    (rms √(3·(1/9)/C)) against elements of rms √(1/3 + 3/9): ≈ 1/√(2·C) over
//    many rows, 0.025 at C = 768, 0.018 at C = 1600 (measured 0.026, 0.019);
//    on few rows it depends on their means: 0.0084 on wideC's 3 rows of
//    3073, 0.0061 on M1's one row of 129: ≥ 1.5 × kBf16Tolerance,
//    120 × kFloat32Tolerance.
//  - inp for norm (the mean and rstd not applied): dweight off by ~1
//    (measured 0.26-2.3); in dinp only the term norm·mean_c(dnorm ⊙ norm)
//    changes, ~1/√C like the mean: measured 0.012 (C = 3073) to 0.66:
//    ≥ 3 × kBf16Tolerance.
//  - a row of dinp left unwritten (its initial value kept): ≈ 1/√(2·M),
//    0.0078 at M = 8192.
//  The float32 loops with each of the first three planted fail every test
//  shape's and GPT-2's in every precision (tests/test_layernorm_reference.cpp).
//
// Call these qualified (layernorm::tolerance): Precision and Output live in
// llmk::reference, so an unqualified call also finds matmul's tolerance() by
// argument-dependent lookup where its header is included, and is ambiguous.
// std::invalid_argument for tf32.
double tolerance(Precision precision, Output output);
// Two results of the same problem, each within tolerance() of the exact one,
// are within twice that of each other (comparing two backends).
double pair_tolerance(Precision precision, Output output);

}  // namespace llmk::reference::layernorm
