// The tolerance of llmk::attention_backward's output (dqkv) against the
// float64 reference (reference.hpp). The measure, the comparison and the
// constants are llmk_reference's (core/reference/compare.hpp); what follows
// is why they fit this operation.
#pragma once

#include <core/reference/compare.hpp>
#include <ops/attention_backward/reference/problem.hpp>

namespace llmk::reference::attention {

// Relative L2 over dqkv's finite elements (dq, dk and dv together), against
// the float64 reference computed from the very inputs llmk receives
// (bf16-representable ones in a bf16 problem).
//
// fp32: kFloat32Tolerance = 5e-5. Error model, u = 2⁻²⁴ ≈ 6e-8, per (b, h):
//  - datt[t, t'] is a float32 dot product of HS terms (dout and v in
//    [-1, 1)): its rounding error, a random walk, is ≈ u·√HS relative to the
//    dot's size (≈ √HS/3);
//  - drow[t] = Σ att ⊙ datt over the row's t + 1 keys is an att-weighted mean
//    of datt (the weights sum to 1): its error is below datt's;
//  - dpreatt = att·(datt − drow): datt − drow has the spread of datt itself
//    (drow is the row's mean, not close to each element), so the subtraction
//    does not amplify the error: ≈ u·√HS relative, a few u;
//  - dq, dk, dv are float32 sums over t + 1 (or T − t) terms: ≈ u·√T
//    relative, plus the terms' own errors, independent, which add like the
//    terms (≈ u·√HS relative again); α = 1/√HS rounded to float adds u/2.
// So at most ≈ u·(√HS + √T), 2.4e-6 at GPT-2's HS = 64 and T = 1024.
// (What could break it: dpreatt's rows sum to 0, so q or k with a common
// offset μ much larger than their spread would cancel in dk and dq and grow
// the relative error by |μ|/spread; the problems' q and k have mean 0.)
// Measured with float32 loops written in tests/test_attention_reference.cpp
// (each sum in order; AttentionToleranceIsTight): 3.9e-8 to 3.2e-7 on the
// test shapes, 9.9e-8 at GPT-2's T = 1024 (accumulated): 150 times below the
// tolerance or more.
//
// bf16 (dout, qkv, att and dqkv bf16): kBf16Tolerance = 4e-3, the hard bound
// of one rounding to bf16 of a result within kFloat32Tolerance. The bf16
// inputs are exact in the reference and every intermediate (datt, drow,
// dpreatt) is float32 in llmk, so the result before its rounding is the
// fp32 case's; then one rounding per element (≤ 2⁻⁸ relative).
//
// bf16 measured: 1.0e-3 to 2.0e-3 (1.5e-3 at T = 1024). "cublas" rounds
// dpreatt to bf16 before the dq and dk products (cuBLAS's bf16 GEMMs take
// two bf16 inputs), a second rounding of independent terms: expected
// ≈ √2·1.5e-3 ≈ 2.2e-3 in dq and dk, within the tolerance (its info says it
// does not round once, so only the L2 bound applies).
//
// tf32 (float arrays, Math::tf32: "cublas"'s products on TF32 tensor
// cores, inputs seen with 10 mantissa bits, u = 2⁻¹¹): each product's
// relative L2 error is about rms(δa + δb) ≈ 0.58·u ≈ 2.8e-4 rounded (matmul's
// derivation, ops/matmul_backward/reference/compare.hpp); dq and dk chain
// two of them (datt, then dpreatt·k), and datt − drow does not amplify
// (above): ≈ √2·2.8e-4 ≈ 4e-4. Simulated (tests/test_attention_reference.cpp,
// AttentionTf32ToleranceSeparates: each product's operands rounded to TF32,
// float sums): 0.7-1.3e-4 accumulated, 1.8-3.7e-4 overwritten; with the
// operands rounded to bf16 instead (a silent switch to bf16 math) 5.6e-4 to
// 1.3e-3 accumulated and 2.1-2.7e-3 overwritten. Measured on the H200,
// "cublas" overwritten at B 8, T 1024: 3.4e-4. kTf32Tolerance = 1.25e-3
// (matmul's): 3.4 times above TF32's worst simulated error, below every
// overwritten bf16-operand one, so the Overwrite tests tell the two apart
// (2.5e-3, before, let both pass); accumulated results, diluted by their
// initial values, cannot be told apart by any bound that TF32 passes with
// margin. A TF32 result fails kFloat32Tolerance.
inline constexpr double kTf32Tolerance = 1.25e-3;
//
// What they catch, measured on the test shapes and GPT-2's T = 1024 with
// dqkv accumulated from random initial values (which make errors harder to
// see) and overwritten: α applied twice to dq and dk (0.08-0.55), the
// diagonal left out of the causal sums (0.033 at T = 1024 to 1.0), one
// masked key let in (t' = t + 1; 0.32-2.9), drow left out of dpreatt
// (0.050-1.2), dk summed along dpreatt's row instead of its column
// (0.098-0.73): each ≥ 8 × kBf16Tolerance, ≥ 650 × kFloat32Tolerance. (On T1,
// one position, dq and dk are 0 and no key is masked: only the diagonal and
// drow bugs can show there, and do.)
//
// std::invalid_argument for precisions other than fp32, tf32 and bf16.
double tolerance(Precision precision);
// Two results of the same problem, each within tolerance() of the exact one,
// are within twice that of each other (comparing two backends).
double pair_tolerance(Precision precision);

// The recompute variant's dqkv (attention_backward_recompute, against
// reference_backward_recompute from the same q, k, v, dout, out and lse):
// the same constants. Its float32 steps beside those above: the logit
// α·q·k, a float32 dot of HS terms (≈ u·√HS relative), and exp(logit − lse)
// whose argument carries an absolute error of ≈ u·(|logit| + |lse|), the
// relative error of P (lse ≤ log T + the largest logit: ≈ 11 at T = 1024,
// so ≈ 11u); D = dout_h · out_h, a float32 dot like datt (≈ u·√HS). So at
// most ≈ u·(√HS + √T + 11), 3e-6 at T = 1024: within kFloat32Tolerance, and
// bf16 (inputs exact in the reference, one rounding of the float result)
// within kBf16Tolerance. Measured with "flash" on OpenMP (llmk-perf, B 1,
// T 1024): fp32 7.3e-7, bf16 1.7e-3. The planted bugs that tests/README.md
// lists give relative errors of 0.1 and more.
double recompute_tolerance(Precision precision);

// attention_backward_recompute's dqkv against attention_backward's on the
// same make_problem (recompute from out and lse, materialized from att):
// each within its tolerance of its own reference, and the two references
// apart by the rounding of their inputs: in fp32 att, out and lse are
// float roundings of one forward (a few u apart: pair_tolerance); in bf16
// att and out are rounded to bf16 each (2⁻⁹ relative per element), which
// moves each reference by up to one bf16 rounding, kBf16Tolerance:
// 4 × kBf16Tolerance in all (the two results' and the two references').
double recompute_vs_materialized_tolerance(Precision precision);

}  // namespace llmk::reference::attention
