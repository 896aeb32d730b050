// The float64 reference of llmk::layernorm_forward, its host problems and
// tolerances, shared by the tests and the perf driver (plain C++17 on the
// layer-norm backward's reference library, header only). Shapes are the
// backward's (ops/layernorm_backward/reference/problem.hpp: B×T×C, with or
// without a bias).
#pragma once

#include <core/reference/bf16.hpp>
#include <core/reference/compare.hpp>
#include <core/reference/precision.hpp>
#include <core/reference/random.hpp>
#include <ops/layernorm_backward/reference/problem.hpp>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace llmk::reference::layernorm_forward {

using layernorm::Shape;
using llmk::reference::Precision;

struct HostProblem {
  Shape shape;
  Precision precision = Precision::fp32;
  std::vector<float> inp, weight, bias;  // inputs (bias empty without one)
  std::vector<float> out, mean, rstd;    // initial values
};

// The bytes a call must move: inp read, out written (and read when
// accumulated), weight and bias read, mean and rstd written (float).
inline double bytes(const Shape& s, Precision p, bool overwrite_out) {
  const double e = p == Precision::bf16 ? 2.0 : 4.0, M = double(s.M()), C = double(s.C);
  return e * (M * C * (overwrite_out ? 2.0 : 3.0) + C * (s.bias ? 2.0 : 1.0)) + 8.0 * M;
}

// inp and weight as the backward's problems make them (rows of different
// means and spreads: an implementation that mixes up rows or ignores the
// mean shows); bias, and the outputs' initial values, random in [-1, 1)
// (an element left unwritten keeps its value). bf16: every bf16 array's
// values rounded to bf16.
inline HostProblem make_problem(const Shape& s, std::uint32_t seed, Precision p) {
  if (p != Precision::fp32 && p != Precision::bf16)
    throw std::invalid_argument(std::string("llmk::reference::layernorm_forward: ") +
                                precision_name(p) + " is not a precision of layernorm_forward");
  const layernorm::HostProblem b = layernorm::make_problem(s, seed, p);
  HostProblem h{s, p, b.inp, b.weight, {}, {}, {}, {}};
  const std::size_t M = std::size_t(s.M()), C = std::size_t(s.C);
  h.bias.resize(s.bias ? C : 0);
  h.out.resize(M * C);
  h.mean.resize(M);
  h.rstd.resize(M);
  fill_random(h.bias, seed * 16 + 11);
  fill_random(h.out, seed * 16 + 12);
  fill_random(h.mean, seed * 16 + 13);
  fill_random(h.rstd, seed * 16 + 14);
  if (p == Precision::bf16)
    for (std::vector<float>* v : {&h.bias, &h.out})
      round_to_bf16(*v);
  return h;
}

// out, mean, rstd in double from the very inputs: mean, the biased variance,
// rstd = 1/√(var + eps) (C = 0: mean 0, rstd 1/√eps in float); out = the initial out
// (unless overwritten) + (x − mean)·rstd·weight + bias. mean and rstd are
// written whatever the update.
inline std::vector<std::vector<double>> reference_forward(const HostProblem& p, bool overwrite_out,
                                                          double eps = 1e-5) {
  const std::size_t M = std::size_t(p.shape.M()), C = std::size_t(p.shape.C);
  if (p.inp.size() != M * C || p.weight.size() != C || p.out.size() != M * C ||
      p.bias.size() != (p.shape.bias ? C : 0))
    throw std::invalid_argument("llmk::reference::layernorm_forward: arrays of the wrong size");
  std::vector<double> out(M * C), mean(M), rstd(M);
  for (std::size_t m = 0; m < M; ++m) {
    const float* x = p.inp.data() + m * C;
    double sum = 0, squares = 0;
    for (std::size_t c = 0; c < C; ++c) sum += x[c];
    mean[m] = C > 0 ? sum / double(C) : 0.0;
    for (std::size_t c = 0; c < C; ++c) squares += (x[c] - mean[m]) * (x[c] - mean[m]);
    // (C = 0: 1/√eps in float, as the call computes it: exact, as the
    // empty-shape tests compare.)
    rstd[m] =
        C > 0 ? 1.0 / std::sqrt(squares / double(C) + eps) : double(1.0f / std::sqrt(float(eps)));
    for (std::size_t c = 0; c < C; ++c) {
      const double y = (x[c] - mean[m]) * rstd[m] * p.weight[c] + (p.shape.bias ? p.bias[c] : 0.0);
      out[m * C + c] = (overwrite_out ? 0.0 : double(p.out[m * C + c])) + y;
    }
  }
  return {out, mean, rstd};
}

// Relative L2 of out (k = 0), mean (1) and rstd (2). fp32 kFloat32Tolerance
// (5e-5) for all three: sums of C float terms (relative error ~√C·u, 2e-6 at
// C = 3073, for rows whose mean is of the order of their spread: the
// problems' offsets make it so), one rsqrt and a few products per element.
// bf16: out kBf16Tolerance (4e-3, one rounding), mean and rstd float sums of
// the very bf16 values, kFloat32Tolerance. What they catch: rstd from the
// unbiased variance (C − 1) moves rstd by 1/(2C), 6.5e-4 at C = 768 (fp32
// fails); a row's mean left out moves out by its offset.
inline double tolerance(Precision p, std::size_t k) {
  return p == Precision::bf16 && k == 0 ? kBf16Tolerance : kFloat32Tolerance;
}

}  // namespace llmk::reference::layernorm_forward
