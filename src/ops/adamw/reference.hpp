// The float64 reference of llmk::adamw, its host problems and tolerances,
// shared by the tests and the perf driver (plain C++17 on llmk_reference,
// header only).
#pragma once

#include <core/reference/bf16.hpp>
#include <core/reference/compare.hpp>
#include <core/reference/precision.hpp>
#include <core/reference/random.hpp>
#include <llmk/adamw.hpp>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace llmk::reference::adamw {

using llmk::reference::Precision;

// N = A·B parameters: a vector of N through the rank-1 entry, an A × B
// matrix through the rank-2 one; with or without master weights.
struct Shape {
  std::string name;  // part of test names: letters, digits and '_' only
  std::int64_t A = 0, B = 0;
  bool master = false;

  std::int64_t N() const { return A * B; }
};

struct HostProblem {
  Shape shape;
  Precision precision = Precision::fp32;
  AdamWHyperparams hp;
  std::vector<float> grads;                 // input
  std::vector<float> params, m, v, master;  // state before the step (master: empty without)
};

// The bytes a step moves: grads read; params, m, v and master read and written.
inline double bytes(const Shape& s, Precision p) {
  const double t = p == Precision::fp32 ? 4.0 : 2.0;   // a parameter
  const double g = p == Precision::bf16 ? 2.0 : 4.0;   // a gradient
  return double(s.N()) * (g + 2.0 * t + 4.0 * 4.0 + (s.master ? 8.0 : 0.0));
}

inline void check_precision(Precision p) {
  require_precision(p, {Precision::fp32, Precision::bf16, Precision::bf16_fp32grad}, "adamw");
}

// The tests' hyperparameters: large enough steps that every term of the
// update shows in the results (lr · weight_decay · p alone is 0.5 % of p),
// GPT-2's betas, a clipping factor, a step past the first (both bias
// corrections at work).
inline AdamWHyperparams test_hyperparams() {
  AdamWHyperparams hp;
  hp.lr = 0.05f;
  hp.beta1 = 0.9f;
  hp.beta2 = 0.95f;
  hp.eps = 1e-6f;
  hp.weight_decay = 0.1f;
  hp.t = 3;
  hp.grad_scale = 0.5f;
  return hp;
}

// params (or master, params its rounding) and grads uniform in [-1, 1), m in
// [-0.1, 0.1), v in [0, 0.01): a state after a few steps; each its own
// stream from `seed`; bf16: params and grads bf16 values; bf16-fp32grad:
// params bf16 values.
inline HostProblem make_problem(const Shape& s, std::uint32_t seed, Precision p) {
  check_precision(p);
  const std::size_t N = std::size_t(s.N());
  HostProblem h{s, p, test_hyperparams(), std::vector<float>(N), std::vector<float>(N),
                std::vector<float>(N), std::vector<float>(N), {}};
  fill_random(h.grads, seed * 16 + 1);
  fill_random(h.params, seed * 16 + 2);
  fill_random(h.m, seed * 16 + 3);
  fill_random(h.v, seed * 16 + 4);
  for (float& x : h.m) x *= 0.1f;
  for (float& x : h.v) x = 0.01f * std::fabs(x);
  if (s.master) h.master = h.params;
  if (p != Precision::fp32)
    round_to_bf16(h.params);
  if (p == Precision::bf16)
    round_to_bf16(h.grads);
  return h;
}

// The step in double from the problem's values: params, m, v, master (empty
// without), as llmk/adamw.hpp writes it.
inline std::vector<std::vector<double>> reference_step(const HostProblem& p) {
  const std::size_t N = std::size_t(p.shape.N());
  for (const std::vector<float>* a : {&p.grads, &p.params, &p.m, &p.v})
    if (a->size() != N)
      throw std::invalid_argument("llmk::reference::adamw: an array of " +
                                  std::to_string(a->size()) + " elements, expected N = " +
                                  std::to_string(N));
  const AdamWHyperparams& hp = p.hp;
  const double b1 = hp.beta1, b2 = hp.beta2;
  const double c1 = 1.0 - std::pow(b1, double(hp.t)), c2 = 1.0 - std::pow(b2, double(hp.t));
  std::vector<std::vector<double>> out(4);
  for (std::vector<double>& o : out) o.resize(p.shape.master ? N : (&o == &out[3] ? 0 : N));
  for (std::size_t i = 0; i < N; ++i) {
    const double g = double(hp.grad_scale) * p.grads[i];
    const double m = b1 * p.m[i] + (1.0 - b1) * g;
    const double v = b2 * p.v[i] + (1.0 - b2) * g * g;
    const double w = p.shape.master ? double(p.master[i]) : double(p.params[i]);
    const double next =
        w - double(hp.lr) * ((m / c1) / (std::sqrt(v / c2) + double(hp.eps)) +
                             double(hp.weight_decay) * w);
    out[0][i] = next, out[1][i] = m, out[2][i] = v;
    if (p.shape.master) out[3][i] = next;
  }
  return out;
}

// Relative L2 of each output: float outputs (m, v, master and fp32 params)
// kFloat32Tolerance (5e-5): a dozen float operations per element, each
// within half an ulp, and the update is a few percent of params, so its
// errors shrink further in them; bf16 params kBf16Tolerance (4e-3), one
// rounding. What they catch: a term dropped (the bias corrections: the
// update ×0.7 at t = 3; weight decay: 0.5 % of params; the clipping factor:
// m and v) moves an output by far more.
inline double tolerance(Precision p, bool params) {
  check_precision(p);
  return p != Precision::fp32 && params ? kBf16Tolerance : kFloat32Tolerance;
}

}  // namespace llmk::reference::adamw
