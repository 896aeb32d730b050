// A float64 GPT-2 forward and backward in plain C++ loops, the example's own
// (independent of llmk's per-operation references): random weights and tokens
// from a seed, the forward's saved activations, and every gradient. Slow
// (O(L·B·T·C²)): for the tiny configurations of the CPU self-check.
#pragma once

#include "model.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gpt2 {

struct ReferenceModel {
  Config cfg;
  Doubles params;                       // parameter_specs' names and shapes
  std::vector<std::int32_t> tokens;     // (B, T), in [0, V)
  std::vector<std::int32_t> targets;    // (B, T), in [0, V)
};

// Weights ~ N(0, 0.02²) as GPT-2's initialization (layernorm weights 1 + N(0, 0.1²),
// biases N(0, 0.02²), so that every term of the backward is exercised); wte's
// padded rows random too (the classifier must ignore their logits).
ReferenceModel random_model(const Config& cfg, std::uint64_t seed);

struct ReferenceForward {
  Doubles acts;                // activation_specs' names, both att and lse
  std::vector<double> losses;  // (B, T)
};
ReferenceForward reference_forward(const ReferenceModel& m);

// The gradients of mean(losses) (gradient_specs' names).
Doubles reference_backward(const ReferenceModel& m, const ReferenceForward& f);

}  // namespace gpt2
