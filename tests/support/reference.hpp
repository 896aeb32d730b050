// The float64 host reference: the loops of llm.c's matmul_backward_cpu, with
// every sum accumulated in double and starting from the initial gradients
// (dbias included: llmk accumulates it, where the seed's CPU code overwrote it).
#pragma once

#include "support/problem.hpp"

#include <vector>

namespace llmk_test {

struct Gradients64 {
  std::vector<double> dinp, dweight, dbias;  // dbias is empty when the shape has no bias
};

// Runs on Kokkos' default host execution space (Kokkos must be initialized).
// NaN in dout propagates as in any correct implementation.
Gradients64 reference_backward(const HostProblem& p);

}  // namespace llmk_test
