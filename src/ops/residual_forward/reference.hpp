// The float64 reference of llmk::residual_forward, its host problems and
// tolerances, shared by the tests and the perf driver (plain C++17 on
// llmk_reference, header only). Shapes are the GELU backward's
// (ops/gelu_backward/reference/problem.hpp: B×T×C, N elements).
#pragma once

#include <core/reference/bf16.hpp>
#include <core/reference/compare.hpp>
#include <core/reference/precision.hpp>
#include <core/reference/random.hpp>
#include <ops/gelu_backward/reference/problem.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace llmk::reference::residual_forward {

using gelu::Shape;
using llmk::reference::Precision;

struct HostProblem {
  Shape shape;
  Precision precision = Precision::fp32;
  std::vector<float> inp1, inp2;  // inputs
  std::vector<float> out;         // initial values (read when accumulated)
};

// The bytes a call must move: inp1 and inp2 read, out written (and read when
// accumulated).
inline double bytes(const Shape& s, Precision p, bool overwrite_out) {
  return (overwrite_out ? 3.0 : 4.0) * double(s.N()) * (p == Precision::bf16 ? 2.0 : 4.0);
}

inline void check_precision(Precision p) {
  require_precision(p, {Precision::fp32, Precision::bf16}, "residual_forward");
}

// inp1, inp2 and out uniform in [-1, 1), each its own stream from `seed`
// (an element left unwritten keeps out's); bf16: the values rounded to bf16.
inline HostProblem make_problem(const Shape& s, std::uint32_t seed, Precision p) {
  check_precision(p);
  const std::size_t N = std::size_t(s.N());
  HostProblem h{s, p, std::vector<float>(N), std::vector<float>(N), std::vector<float>(N)};
  fill_random(h.inp1, seed * 16 + 1);
  fill_random(h.inp2, seed * 16 + 2);
  fill_random(h.out, seed * 16 + 3);
  if (p == Precision::bf16)
    for (std::vector<float>* v : {&h.inp1, &h.inp2, &h.out})
      round_to_bf16(*v);
  return h;
}

// out ⟵ inp1 + inp2: the initial out (unless overwritten) + inp1 + inp2, in double.
inline std::vector<double> reference_forward(const HostProblem& p, bool overwrite_out) {
  const std::size_t N = std::size_t(p.shape.N());
  if (p.inp1.size() != N || p.inp2.size() != N || p.out.size() != N)
    throw std::invalid_argument("llmk::reference::residual_forward: arrays of " +
                                std::to_string(p.inp1.size()) + ", " +
                                std::to_string(p.inp2.size()) + " and " +
                                std::to_string(p.out.size()) + " elements, expected N = " +
                                std::to_string(N));
  std::vector<double> out(N);
  for (std::size_t i = 0; i < N; ++i)
    out[i] = (overwrite_out ? 0.0 : double(p.out[i])) + double(p.inp1[i]) + double(p.inp2[i]);
  return out;
}

// Relative L2 of out: fp32 kFloat32Tolerance (5e-5): one or two float
// additions per element, each within half an ulp (2^-24) of its result;
// bf16 kBf16Tolerance (4e-3), one rounding of the result. What they catch:
// an element left as it was, or one input left out, moves the L2 by far
// more (an input dropped: ~0.6 for these uniform values).
inline double tolerance(Precision p) {
  check_precision(p);
  return p == Precision::bf16 ? kBf16Tolerance : kFloat32Tolerance;
}

}  // namespace llmk::reference::residual_forward
