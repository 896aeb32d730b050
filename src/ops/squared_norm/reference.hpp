// The float64 reference of llmk::squared_norm, its host problems and
// tolerances, shared by the tests and the perf driver (plain C++17 on
// llmk_reference, header only). Shapes are AdamW's (ops/adamw/reference.hpp:
// N = A·B values; `master` unused).
#pragma once

#include <core/reference/bf16.hpp>
#include <core/reference/compare.hpp>
#include <core/reference/precision.hpp>
#include <core/reference/random.hpp>
#include <ops/adamw/reference.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace llmk::reference::squared_norm {

using adamw::Shape;
using llmk::reference::Precision;

struct HostProblem {
  Shape shape;
  Precision precision = Precision::fp32;
  std::vector<float> inp;  // input
  std::vector<float> out;  // one value: initial (read when accumulated)
};

// The bytes a call must move: inp read (the result is one float).
inline double bytes(const Shape& s, Precision p) {
  return double(s.N()) * (p == Precision::bf16 ? 2.0 : 4.0);
}

inline void check_precision(Precision p) {
  require_precision(p, {Precision::fp32, Precision::bf16}, "squared_norm");
}

// inp uniform in [-1, 1) (bf16: rounded to bf16), out's initial value in
// [-1, 1): each its own stream from `seed`.
inline HostProblem make_problem(const Shape& s, std::uint32_t seed, Precision p) {
  check_precision(p);
  HostProblem h{s, p, std::vector<float>(std::size_t(s.N())), std::vector<float>(1)};
  fill_random(h.inp, seed * 16 + 1);
  fill_random(h.out, seed * 16 + 2);
  if (p == Precision::bf16)
    round_to_bf16(h.inp);
  return h;
}

// out ⟵ Σ inp²: the initial out (unless overwritten) plus the sum, in double.
inline std::vector<double> reference_sum(const HostProblem& p, bool overwrite_out) {
  if (p.inp.size() != std::size_t(p.shape.N()) || p.out.size() != 1)
    throw std::invalid_argument("llmk::reference::squared_norm: inp of " +
                                std::to_string(p.inp.size()) + " values, expected N = " +
                                std::to_string(p.shape.N()) + ", and out of one");
  double sum = overwrite_out ? 0.0 : double(p.out[0]);
  for (const float x : p.inp) sum += double(x) * double(x);
  return {sum};
}

// Relative error of out: kFloat32Tolerance (5e-5): sums of up to 8192
// squares in float (≈ u·√8192 = 5e-6 relative), their sum in double, one
// rounding. What it catches: a chunk left out moves the sum by its share
// (≥ 1/7,600 of GPT-2's gradients: 1.3e-4), a value counted twice or not
// squared by far more.
inline double tolerance(Precision p) {
  check_precision(p);
  return kFloat32Tolerance;
}

}  // namespace llmk::reference::squared_norm
