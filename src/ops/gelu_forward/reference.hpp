// The float64 reference of llmk::gelu_forward, its host problems and
// tolerances, shared by the tests and the perf driver (plain C++17 on
// llmk_reference, header only). Shapes are the GELU backward's
// (ops/gelu_backward/reference/problem.hpp: B×T×C, N elements).
#pragma once

#include <core/reference/bf16.hpp>
#include <core/reference/compare.hpp>
#include <core/reference/precision.hpp>
#include <core/reference/random.hpp>
#include <ops/gelu_backward/reference/problem.hpp>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace llmk::reference::gelu_forward {

using gelu::Shape;
using llmk::reference::Precision;

struct HostProblem {
  Shape shape;
  Precision precision = Precision::fp32;
  std::vector<float> inp;  // input
  std::vector<float> out;  // initial values (read when accumulated)
};

// The bytes a call must move: inp read, out written (and read when accumulated).
inline double bytes(const Shape& s, Precision p, bool overwrite_out) {
  return (overwrite_out ? 2.0 : 3.0) * double(s.N()) * (p == Precision::bf16 ? 2.0 : 4.0);
}

inline void check_precision(Precision p) {
  require_precision(p, {Precision::fp32, Precision::bf16}, "gelu_forward");
}

// inp = 4·x, x uniform in [-1, 1): both tails (gelu → 0 below −3, → x above
// 3) and the minimum near −0.75; out random in [-1, 1) (an element left
// unwritten keeps it). Each its own stream from `seed`; bf16: the values
// rounded to bf16.
inline HostProblem make_problem(const Shape& s, std::uint32_t seed, Precision p) {
  check_precision(p);
  HostProblem h{s, p, std::vector<float>(std::size_t(s.N())),
                std::vector<float>(std::size_t(s.N()))};
  fill_random(h.inp, seed * 16 + 1);
  fill_random(h.out, seed * 16 + 2);
  for (float& x : h.inp) x *= 4.0f;
  if (p == Precision::bf16)
    for (std::vector<float>* v : {&h.inp, &h.out})
      round_to_bf16(*v);
  return h;
}

// gelu in double, written apart from the kernels' (kernels/gelu.hpp).
inline double gelu(double x) {
  const double s = std::sqrt(2.0 / 3.14159265358979323846);
  return 0.5 * x * (1.0 + std::tanh(s * (x + 0.044715 * x * x * x)));
}

// out ⟵ gelu(inp): the initial out (unless overwritten) + gelu(inp), in double.
inline std::vector<double> reference_forward(const HostProblem& p, bool overwrite_out) {
  const std::size_t N = std::size_t(p.shape.N());
  if (p.inp.size() != N || p.out.size() != N)
    throw std::invalid_argument(
        "llmk::reference::gelu_forward: arrays of " + std::to_string(p.inp.size()) + " and " +
        std::to_string(p.out.size()) + " elements, expected N = " + std::to_string(N));
  std::vector<double> out(N);
  for (std::size_t i = 0; i < N; ++i)
    out[i] = (overwrite_out ? 0.0 : double(p.out[i])) + gelu(double(p.inp[i]));
  return out;
}

// Relative L2 of out: fp32 kFloat32Tolerance (5e-5): gelu in float is a
// dozen float operations and a tanhf of a few ulps per element, relative to
// the element's size, not growing with N (the cancellation of 1 + t below
// x = −3 loses accuracy only on elements far below the rms); bf16
// kBf16Tolerance (4e-3), one rounding of the result. What they catch: an
// element left as it was moves the L2 by ≈ 1/√N; 0.04 for 0.044715 moves it
// by ~1e-3 (fp32 fails).
inline double tolerance(Precision p) {
  check_precision(p);
  return p == Precision::bf16 ? kBf16Tolerance : kFloat32Tolerance;
}

}  // namespace llmk::reference::gelu_forward
