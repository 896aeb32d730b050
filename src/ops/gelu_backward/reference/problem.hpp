// Host problems of llmk::gelu_backward, shared by the tests and the perf
// driver: shapes, random inputs and initial gradients. Part of
// llmk_gelu_backward_reference (plain C++17, not installed); precisions,
// bf16 helpers and fill_random are llmk_reference's (core/reference/).
#pragma once

#include <core/reference/bf16.hpp>
#include <core/reference/precision.hpp>
#include <core/reference/random.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace llmk::reference::gelu {

// fp32 and bf16 (dout, inp, dinp all of one type); what takes another
// Precision here throws std::invalid_argument.
using llmk::reference::Precision;

// A problem's sizes: dout, inp and dinp are B×T×C (N = B·T·C elements; the
// rank-2 entry sees M = B·T rows of C, the raw one N).
struct Shape {
  std::string name;  // part of test names: letters, digits and '_' only
  std::int64_t B = 0, T = 0, C = 0;

  std::int64_t M() const { return B * T; }
  std::int64_t N() const { return B * T * C; }
  // Bytes a call must move at least: dout and inp read, dinp written (and
  // read too unless overwrite_dinp), in the precision's element size.
  double bytes(Precision p, bool overwrite_dinp) const;
};

// The shapes every implementation is checked on (problem.cpp says why each).
const std::vector<Shape>& test_shapes();
// Zero-sized dimensions, valid no-ops: B = 0, C = 0.
const std::vector<Shape>& empty_shapes();
// GPT-2 124M's MLP activations at llm.c's training batch: B 8, T 1024, C 3072;
// and 1558M's (C = 6400).
std::vector<Shape> gpt2_shapes();

// dout, inp and the initial dinp as row-major host arrays of N elements;
// bf16-representable in the bf16 configuration.
struct HostProblem {
  Shape shape;
  Precision precision = Precision::fp32;
  std::vector<float> dout, inp;  // inputs
  std::vector<float> dinp;       // initial gradient
};

// dout and dinp random non-zero in [-1, 1) (fill_random: dinp accumulates,
// and an element left unwritten keeps its initial value, which the reference
// includes); inp = 4·x, x in [-1, 1): both of GELU's tails (gelu' → 0 below
// −3, → 1 above 3), its minimum (gelu'(−1.4) ≈ −0.13) and its zero near −0.75.
// Each array its own stream from `seed`; a bf16 problem holds the fp32
// problem's values rounded to bf16.
HostProblem make_problem(const Shape& shape, std::uint32_t seed = 2024,
                         Precision precision = Precision::fp32);

}  // namespace llmk::reference::gelu
