// Host problems of llmk::layernorm_backward, shared by the tests and the perf
// driver: shapes, random inputs with the forward's mean and rstd, and random
// initial gradients. Part of llmk_layernorm_backward_reference, a static
// library that is not installed and depends on neither llmk nor Kokkos (plain
// C++17); the precisions, bf16 helpers and fill_random are llmk_reference's
// (core/reference/).
#pragma once

#include <core/reference/bf16.hpp>
#include <core/reference/precision.hpp>
#include <core/reference/random.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace llmk::reference::layernorm {

// fp32, bf16 and bf16_fp32grad; tf32 is not a layernorm_backward precision
// (there are no products for tensor cores), and what takes a Precision here
// throws std::invalid_argument for it.
using llmk::reference::Output;
using llmk::reference::Precision;

// A problem's sizes: dout, inp and dinp are B×T×C, weight, dweight, dbias C,
// mean and rstd B×T.
struct Shape {
  std::string name;  // part of test names: letters, digits and '_' only
  std::int64_t B = 0, T = 0, C = 0;
  bool bias = true;  // false: no bias gradient (an empty dbias view, or nullptr)

  std::int64_t M() const { return B * T; }
  // Bytes a call must move at least, in the precision's element sizes: dout
  // and inp read, dinp written (and read too unless overwrite_dinp), weight
  // read, dweight and dbias read and written (C each), mean and rstd read (M
  // floats each). std::invalid_argument for tf32.
  double bytes(Precision p, bool overwrite_dinp) const;
};

// The shapes every implementation is checked on (problem.cpp says why each).
const std::vector<Shape>& test_shapes();
// Zero-sized dimensions, valid no-ops: B = 0 (no rows), C = 0 (rows of nothing).
const std::vector<Shape>& empty_shapes();
// GPT-2's layernorms at llm.c's training batch (B = 8, T = 1024):
// "gpt2_124M" (C = 768) and "gpt2_1558M" (C = 1600).
std::vector<Shape> gpt2_shapes();

// Everything layernorm_backward reads, and the values the gradients start
// from, as row-major host arrays (llm.c's layout): dout, inp, dinp M×C;
// weight, dweight, dbias C (dbias empty without bias); mean, rstd M.
// Values that the problem's element types hold exactly: in a bf16
// configuration dout, inp and weight are bf16-representable
// (round_to_bf16(x) == x), and so are the initial gradients of the outputs
// that are bf16; mean and rstd are float in every configuration.
struct HostProblem {
  Shape shape;
  Precision precision = Precision::fp32;  // the configuration the values are made for
  std::vector<float> dout, inp, weight, mean, rstd;  // inputs
  std::vector<float> dinp, dweight, dbias;           // initial gradients
};

// Random non-zero dout and weight (fill_random, [-1, 1)), and random non-zero
// initial gradients: gradients accumulate (+=), and an element an
// implementation fails to write keeps its initial value, which the reference
// includes, so it shows as an error. inp is offset + scale·x per row, x
// uniform in [-1, 1), the row's offset uniform in [-2, 2) and its scale in
// [0.5, 2): rows of different means and spreads (rstd from ≈ 0.87 to 3.5), so
// that an implementation that ignores mean or rstd, or mixes up rows, shows.
// mean and rstd are the forward's, from the very inp values (the bf16 ones in
// a bf16 configuration), as GPT-2's layernorm forward defines them: the mean,
// the biased variance var = Σ (x − mean)² / C, rstd = 1 / √(var + 1e-5), in
// double, then rounded to float (an empty row, C = 0: mean 0, var 0).
// Each array has its own stream (derived from `seed`); a precision's problem
// holds the fp32 problem's values rounded to bf16 where the type is bf16
// (never 0 where they are not 0: bf16 has float32's exponent range), and mean
// and rstd of its rounded inp. std::invalid_argument for tf32.
HostProblem make_problem(const Shape& shape, std::uint32_t seed = 2024,
                         Precision precision = Precision::fp32);

}  // namespace llmk::reference::layernorm
