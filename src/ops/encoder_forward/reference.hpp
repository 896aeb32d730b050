// The float64 reference of llmk::encoder_forward, its host problems and
// tolerances, shared by the tests and the perf driver (header only, on the
// encoder backward's reference library: its shapes and token draws).
#pragma once

#include <core/reference/compare.hpp>
#include <core/reference/precision.hpp>
#include <ops/encoder_backward/reference/reference.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace llmk::reference::encoder_forward {

using encoder::Shape;
using llmk::reference::Precision;

struct HostProblem {
  Shape shape;
  Precision precision = Precision::fp32;
  std::vector<int> tokens;         // M
  std::vector<float> wte, wpe;     // V × C, T × C
  std::vector<float> out;          // M × C: initial values (read when accumulated)
};

inline void check_precision(Precision p) {
  require_precision(p, {Precision::fp32, Precision::bf16}, "encoder_forward");
}

// The backward's problem of the same shape, its arrays renamed: tokens by
// the shape's draw, wte and wpe random in [-1, 1) where dwte and dwpe were,
// out's initial values where dout was; bf16: all bf16-representable.
inline HostProblem make_problem(const Shape& s, std::uint32_t seed, Precision p) {
  check_precision(p);
  encoder::HostProblem b = encoder::make_problem(s, seed, p);
  return {s, p, std::move(b.tokens), std::move(b.dwte), std::move(b.dwpe), std::move(b.dout)};
}

// The bytes a call must move: tokens read, a row of wte and of wpe read and
// a row of out written (and read when accumulated) per position.
inline double bytes(const Shape& s, Precision p, bool overwrite_out) {
  const double e = p == Precision::bf16 ? 2.0 : 4.0;
  return double(s.M()) * (4.0 + double(s.C) * e * (overwrite_out ? 3.0 : 4.0));
}

// out ⟵ wte[token] + wpe[t]: the initial out (unless overwritten) + the sum, in double.
inline std::vector<double> reference_forward(const HostProblem& p, bool overwrite_out) {
  const Shape& s = p.shape;
  const std::size_t M = std::size_t(s.M()), C = std::size_t(s.C), T = std::size_t(s.T);
  if (p.tokens.size() != M || p.out.size() != M * C || p.wte.size() != std::size_t(s.V) * C ||
      p.wpe.size() != T * C)
    throw std::invalid_argument(
        "llmk::reference::encoder_forward: an array's size does not match the shape");
  std::vector<double> out(M * C);
  for (std::size_t m = 0; m < M; ++m) {
    const std::size_t v = std::size_t(p.tokens[m]), t = m % T;
    for (std::size_t c = 0; c < C; ++c)
      out[m * C + c] = (overwrite_out ? 0.0 : double(p.out[m * C + c])) +
                       double(p.wte[v * C + c]) + double(p.wpe[t * C + c]);
  }
  return out;
}

// Relative L2 of out: fp32 kFloat32Tolerance (5e-5): one or two float
// additions a element, ~1e-7; bf16 kBf16Tolerance (4e-3), one rounding of
// the result. What they catch: a row of the wrong token or position, or
// wpe left out, moves the L2 by O(1/√M) or more.
inline double tolerance(Precision p) {
  check_precision(p);
  return p == Precision::bf16 ? kBf16Tolerance : kFloat32Tolerance;
}

}  // namespace llmk::reference::encoder_forward
