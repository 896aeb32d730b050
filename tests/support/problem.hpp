// Test problems on the host: a shape, random inputs and random initial
// gradients. Nothing here depends on the backend under test.
#pragma once

#include <cstdint>
#include <vector>

namespace llmk_test {

struct Shape {
  const char* name;  // part of test names: letters, digits and '_' only
  std::int64_t B, T, C, OC;
  bool bias = true;  // false: no bias gradient (an empty dbias view, or nullptr)
  std::int64_t M() const { return B * T; }
};

// The shapes every implementation is checked on (see problem.cpp for why each).
const std::vector<Shape>& test_shapes();
// The shape of llm.c's dev/cuda/matmul_backward.cu: B=8, T=1024, C=768, OC=3072.
Shape seed_shape();

// Everything matmul_backward reads, and the values the gradients start from.
struct HostProblem {
  Shape shape;
  std::vector<float> dout, inp, weight;     // inputs: M×OC, M×C, OC×C
  std::vector<float> dinp, dweight, dbias;  // initial gradients: M×C, OC×C, OC (or none)
};

// Uniform in [-1, 1) and never 0, from std::mt19937 (whose sequence the C++
// standard fixes), so a seed gives the same values on every platform.
void fill_random(std::vector<float>& values, std::uint32_t seed);

// Random non-zero inputs AND random non-zero initial gradients: gradients
// accumulate (+=), and an element an implementation fails to write keeps its
// initial value, which the reference includes, so it shows as an error.
HostProblem make_problem(const Shape& shape, std::uint32_t seed = 2024);

}  // namespace llmk_test
