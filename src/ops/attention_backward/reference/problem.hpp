// Host problems of llmk::attention_backward, shared by the tests and the perf
// driver: shapes, random q, k, v and dout with the forward's att (the true
// causal softmax of q·kᵀ/√HS), and random initial gradients. Part of
// llmk_attention_backward_reference, a static library that is not installed
// and depends on neither llmk nor Kokkos (plain C++17); the precisions, bf16
// helpers and fill_random are llmk_reference's (core/reference/).
#pragma once

#include <core/reference/bf16.hpp>
#include <core/reference/precision.hpp>
#include <core/reference/random.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace llmk::reference::attention {

// fp32 and bf16; what takes a Precision here throws std::invalid_argument
// for the others (tf32 comes with the cuBLAS paths; attention has no
// parameter gradients for bf16-fp32grad to keep in float).
using llmk::reference::Precision;

// A problem's sizes: qkv and dqkv are B×T×3C, dout B×T×C, att B×NH×T×T,
// heads of HS = C / NH channels.
struct Shape {
  std::string name;  // part of test names: letters, digits and '_' only
  std::int64_t B = 0, T = 0, C = 0, NH = 1;

  std::int64_t M() const { return B * T; }
  std::int64_t HS() const { return NH > 0 ? C / NH : 0; }
  // Floating-point operations of the four products on the causal part
  // alone, 2 per multiply-add: per (b, h) each of datt, dv, dq and dk
  // multiplies T(T+1)/2 elements of a T × T matrix by HS values, so
  // 4 · 2 · HS · T(T+1)/2 · B·NH = 4·B·C·T·(T+1). (The softmax backward's
  // few operations per element are not counted. A dense implementation does
  // about twice this work; the rate is of the useful half.)
  double flops() const;
};

// The shapes every implementation is checked on (problem.cpp says why each).
const std::vector<Shape>& test_shapes();
// Zero-sized dimensions, valid no-ops: B = 0, T = 0, C = 0.
const std::vector<Shape>& empty_shapes();
// GPT-2 124M's attention at T = 1024 (one sequence: "gpt2_124M_T1024") and
// llm.c's training batch B = 8 for the perf driver.
std::vector<Shape> gpt2_shapes();

// Everything attention_backward reads, and the values dqkv starts from, as
// row-major host arrays (llm.c's layout): qkv, dqkv (B·T)×3C, dout (B·T)×C,
// att (B·NH·T)×T. Values that the problem's element type holds exactly (in
// bf16, round_to_bf16(x) == x).
//
// And for the recompute variant (attention_backward_recompute), in place of
// att: the forward's out (B·T)×C (out_h = att_h·v_h, heads side by side as
// in dout) and lse (B·NH·T) float, the log-sum-exp of each row's causal
// logits q_t·k_t'/√HS (lse[(b·NH + h)·T + t]).
struct HostProblem {
  Shape shape;
  Precision precision = Precision::fp32;
  std::vector<float> dout, qkv, att;  // inputs
  std::vector<float> out, lse;        // the recompute variant's inputs in place of att
  std::vector<float> dqkv;            // initial gradient
};

// The causal softmax forward of query row t of head h in sequence b, in
// double from the (rounded) qkv of a problem of shape s: its probabilities
// over the keys u ≤ t into weights[0..t], out_h[t] = Σ_u weights[u]·v_u into
// out_row[0..HS), and the row's log-sum-exp (the largest logit subtracted
// before the exponentials) returned. make_problem's out, lse and att, and
// attention_forward's reference (reference.hpp), are this.
double forward_row(const Shape& s, const std::vector<float>& qkv, std::int64_t b, std::int64_t h,
                   std::int64_t t, double* weights, double* out_row);

// Random non-zero dout, k, v and initial dqkv (fill_random, [-1, 1)), q in
// [-4, 4) (4·fill_random: exact in float and bf16) so that the softmax rows
// are far from uniform (logits of spread ≈ 4/3 whatever HS). att's causal
// part (t' ≤ t) is the forward's: softmax over t' of q[t]·k[t']/√HS in
// double from the very (rounded) q and k, then rounded to the element type;
// its rows sum to 1 up to that rounding. Its masked part (t' > t), which
// nothing may read, holds random values of its own stream in [-1, 1), not
// the zeros llm.c's CPU forward writes, so that reading it shows. Each array
// has its own stream (derived from `seed`); a bf16 problem holds the fp32
// problem's values rounded to bf16. out and lse are the same forward's in
// double (att unrounded), out then rounded to the element type, lse to
// float. std::invalid_argument for tf32,
// bf16_fp32grad, NH < 1 or C not a multiple of NH. The forward runs on
// `threads` std::threads (0: one per hardware thread), the same values.
HostProblem make_problem(const Shape& shape, std::uint32_t seed = 2024,
                         Precision precision = Precision::fp32, int threads = 1);

// The same problem with att's masked part (t' > t) all NaN.
HostProblem with_masked_nan(HostProblem p);

}  // namespace llmk::reference::attention
