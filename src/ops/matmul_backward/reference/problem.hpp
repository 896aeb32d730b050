// Host problems of llmk::matmul_backward, shared by the tests and the perf
// driver: shapes, random inputs and random initial gradients.
// Part of llmk_matmul_backward_reference, a static library that is not
// installed and depends on neither llmk nor Kokkos (plain C++17).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace llmk::reference {

// A problem's sizes: dout and out are B×T×OC, inp B×T×C, weight OC×C.
struct Shape {
  std::string name;  // part of test names: letters, digits and '_' only
  std::int64_t B = 0, T = 0, C = 0, OC = 0;
  bool bias = true;  // false: no bias gradient (an empty dbias view, or nullptr)

  std::int64_t M() const { return B * T; }
  // One backward pass: two GEMMs of 2·M·C·OC flops each, plus M·OC adds for dbias.
  double flops() const;
  // Bytes the bias pass reads: all of dout (0 without bias).
  double bias_bytes() const;
};

// The shapes every implementation is checked on (problem.cpp says why each).
const std::vector<Shape>& test_shapes();
// The shape of llm.c's dev/cuda/matmul_backward.cu: B=8, T=1024, C=768, OC=3072.
Shape seed_shape();

// Everything matmul_backward reads, and the values the gradients start from,
// as row-major host arrays (llm.c's layout).
struct HostProblem {
  Shape shape;
  std::vector<float> dout, inp, weight;     // inputs: M×OC, M×C, OC×C
  std::vector<float> dinp, dweight, dbias;  // initial gradients: M×C, OC×C, OC (empty without bias)
};

// Uniform in [-1, 1) and never 0, from std::mt19937 (whose sequence the C++
// standard fixes; no std::*_distribution, whose output is not), so a seed gives
// the same values on every platform.
void fill_random(std::vector<float>& values, std::uint32_t seed);
void fill_random(float* values, std::size_t count, std::uint32_t seed);

// Random non-zero inputs AND random non-zero initial gradients: gradients
// accumulate (+=), and an element an implementation fails to write keeps its
// initial value, which the reference includes, so it shows as an error.
// Each array has its own stream (derived from `seed`).
HostProblem make_problem(const Shape& shape, std::uint32_t seed = 2024);

}  // namespace llmk::reference
