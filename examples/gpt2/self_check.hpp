// The CPU self-check's inputs: the float64 reference GPT-2 (reference.hpp)
// on a random model, its forward's activations rounded to float for llmk,
// its gradients and losses as the expected values.
#pragma once

#include "model.hpp"

#include <cstdint>

namespace gpt2 {

struct SelfCheck {
  HostInputs inputs;
  Doubles gradients;
  std::vector<double> losses;
};

// Also checks the reference's own backward against central differences of its
// forward's mean loss (a few entries of every parameter) and throws
// std::runtime_error when they disagree: the reference is tested before it judges.
SelfCheck make_self_check(const Config& cfg, std::uint64_t seed);

}  // namespace gpt2
