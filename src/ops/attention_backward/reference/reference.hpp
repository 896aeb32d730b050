// The float64 reference of llmk::attention_backward, shared by the tests and
// the perf driver: the formulas of llmk/attention_backward.hpp in double,
// with loops of their own (no code shared with llmk's kernels).
#pragma once

#include <ops/attention_backward/reference/problem.hpp>

#include <vector>

namespace llmk::reference::attention {

// Which products the sums run over:
//  - Causal: the causal part alone, the formulas as written (t' ≤ t): an
//    output depends on exactly the inputs it mathematically does;
//  - Dense: every product runs over all T, the masked elements of att and
//    dpreatt exactly 0 (never read from att), as dense GEMMs over the T × T
//    matrices compute them. Finite inputs give the Causal values (each masked
//    term is +0); a NaN or Inf in q, k, v or dout also reaches, through
//    0 · NaN, the elements of its (b, h) and channel that Causal keeps
//    finite. The tests take Causal as the reference and Dense as the most
//    NaN an implementation may have (llmk/attention_backward.hpp).
enum class Masking { Causal, Dense };

// dqkv (B·T × 3C: dq, dk, dv side by side, llm.c's layout) in double: the
// initial dqkv (unless overwrite) + the gradients of p, from the very values
// in p (bf16-representable ones in a bf16 problem), per (b, h), α = 1/√HS:
//   datt    = dout_h · vᵀ,   drow[t] = Σ_{t' ≤ t} att[t, t'] · datt[t, t']
//   dpreatt = att ⊙ (datt − drow)                  (t' ≤ t)
//   dq = α · dpreatt · k,   dk = α · dpreattᵀ · q,   dv = attᵀ · dout_h
// att's masked part is never read. The (b, h) pairs are split over `threads`
// std::threads (0: std::thread::hardware_concurrency()), each summing in a
// fixed order: the same results for every thread count.
// std::invalid_argument if an array's size does not match the shape.
std::vector<double> reference_backward(const HostProblem& p, bool overwrite = true,
                                       Masking masking = Masking::Causal, int threads = 0);

// The recompute variant's (attention_backward_recompute) dqkv in double,
// from q, k, v, dout, out and lse alone (att is not read): per (b, h),
//   P[t, u] = exp(α q_t·k_u − lse[t])   (u ≤ t; 0 above)
//   drow[t] = D[t] = dout_h[t] · out_h[t]
// then the formulas above with P for att and D for drow, through the same
// loops as reference_backward (Causal). With p's out and lse those of its
// att (make_problem), the two references agree up to the rounding of att,
// out and lse to their types (tests/test_attention_reference.cpp).
std::vector<double> reference_backward_recompute(const HostProblem& p, bool overwrite = true,
                                                 int threads = 0);

// attention_forward's out and lse in double from p.qkv (forward_row):
// {out (B·T)×C, the initial p.out added unless overwrite; lse B·NH·T}. Rows
// split over `threads` std::threads as above.
std::vector<std::vector<double>> reference_forward(const HostProblem& p, bool overwrite = true,
                                                   int threads = 0);

}  // namespace llmk::reference::attention
