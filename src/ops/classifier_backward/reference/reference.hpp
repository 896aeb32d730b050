// llmk::classifier_backward's float64 reference, shapes, host problems and
// tolerances, shared by the tests and the perf driver. Part of
// llmk_classifier_backward_reference, a static library that is not installed
// and depends on neither llmk nor Kokkos (plain C++17); the precisions, bf16
// helpers and fill_random are llmk_reference's (core/reference/).
#pragma once

#include <core/reference/precision.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace llmk::reference::classifier {

using llmk::reference::Precision;  // fp32 and bf16 (the others: std::invalid_argument)

// logits and dlogits are B×T×Vp (V real columns), targets, losses and a
// per-position dloss B×T.
struct Shape {
  std::string name;  // part of test names: letters, digits and '_' only
  std::int64_t B = 0, T = 0, V = 0, Vp = 0;
  std::int64_t M() const { return B * T; }
  // Bytes a call moves at least: the logits read and written once, the
  // targets read (losses and dloss: 4 bytes a row each, left out).
  double bytes(Precision p) const;
};

// The shapes the tests check every implementation and precision on
// (reference.cpp says why each).
const std::vector<Shape>& test_shapes();
// GPT-2's classifier at llm.c's training batch: B 8, T 1024, V 50257, Vp 50304.
Shape gpt2_shape();

// Row-major host arrays: logits M×Vp (bf16-representable in bf16), whose
// padded columns [V, Vp) hold NaN (never to be read into a result); targets
// M in [0, V); dloss M floats, or empty (dloss_value for every position).
struct HostProblem {
  Shape shape;
  Precision precision = Precision::fp32;
  std::vector<float> logits;
  std::vector<std::int32_t> targets;
  std::vector<float> dloss;
  float dloss_value = 1.0f;
};

// logits scale·x, x uniform in [-1, 1) (fill_random), scale = 4: softmax
// rows far from uniform (probabilities from e⁻⁸ to 1 of each other);
// targets uniform in [0, V) with the last real column V − 1 at position 0;
// a per-position dloss (per_position) uniform in [0.5, 1.5) / M, else
// dloss_value = 1/M (llm.c's mean over positions).
HostProblem make_problem(const Shape& shape, std::uint32_t seed = 2024,
                         Precision precision = Precision::fp32, bool per_position = false);

// The results in float64 from the problem's (float or bf16-rounded) logits:
// dlogits M×Vp (0 in the padded columns), losses M.
struct Result64 {
  std::vector<double> dlogits, losses;
};
Result64 reference_backward(const HostProblem& p);

// Element-wise tolerances, |out − ref| ≤ rel·|ref| + abs·scale, with scale
// the row's |dloss| (dlogits) or 1 (losses), derived in reference.cpp.
struct Tolerance {
  double rel = 0, abs = 0;
};
Tolerance dlogits_tolerance(Precision p);
Tolerance losses_tolerance(Precision p);

// "" when every element of out is within the tolerance of ref (NaN exactly
// where ref is NaN), else a line naming the worst element (row, col) and the
// count of those outside.
std::string compare(const char* what, const std::vector<float>& out,
                    const std::vector<double>& ref, std::int64_t cols, Tolerance tol,
                    const std::vector<double>& scale_per_row = {});

}  // namespace llmk::reference::classifier
