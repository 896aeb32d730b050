// The float64 reference of llmk::layernorm_backward, shared by the tests and
// the perf driver: the formula of llmk/layernorm_backward.hpp in double, with
// loops of its own (it shares no code with llmk's kernels), from the
// problem's float mean and rstd (as llm.c's backward takes the forward's).
#pragma once

#include <ops/layernorm_backward/reference/problem.hpp>

#include <vector>

namespace llmk::reference::layernorm {

// Which outputs are overwritten (llmk's Update::overwrite): their initial
// values play no part. The others accumulate (+=, the default).
struct Updates {
  bool overwrite_dinp = false, overwrite_dweight = false, overwrite_dbias = false;
};

struct Gradients64 {
  std::vector<double> dinp;     // M × C
  std::vector<double> dweight;  // C
  std::vector<double> dbias;    // C; empty when the shape has no bias
};

// initial gradients (unless overwritten) + the gradients of p, in double,
// from the very values in p (bf16-representable ones in a bf16 problem: the
// reference computes with the values llmk receives), per row m with
// norm = (inp − mean[m])·rstd[m] and dnorm = dout ⊙ weight:
//   dinp[m, :] ⟵ rstd[m]·(dnorm − mean_c(dnorm) − norm·mean_c(dnorm ⊙ norm))
//   dweight    ⟵ Σ_m dout[m, :] ⊙ norm[m, :]
//   dbias      ⟵ Σ_m dout[m, :]
// With p.mean and p.rstd the forward's statistics of p.inp, dinp is dL/dinp
// of L = Σ dout ⊙ layernorm(inp) through mean and rstd too (up to their
// rounding to float). dinp's rows are split over `threads` std::threads (0:
// std::thread::hardware_concurrency()), dweight's and dbias's columns too,
// each column summed over the rows in order: the results are the same for
// every thread count. NaN and Inf in the inputs propagate as in any correct
// implementation. std::invalid_argument if an array's size does not match
// the shape.
Gradients64 reference_backward(const HostProblem& p, const Updates& updates = {},
                               int threads = 0);

}  // namespace llmk::reference::layernorm
