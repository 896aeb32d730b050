// The problem llmk-perf times: a shape and its random host inputs, shared by
// every implementation and peer of a run.
#pragma once

#include <llmk/types.hpp>

#include <vector>

namespace llmk::perf {

struct Shape {
  index_t B = 8, T = 1024, C = 768, OC = 3072;  // the seed's shape (GPT-2 small MLP)
  index_t M() const { return B * T; }
  // One backward pass: two GEMMs of 2·M·C·OC flops each, plus M·OC adds for dbias.
  double flops() const { return 4.0 * double(M()) * double(C) * double(OC) + double(M()) * double(OC); }
  // The bias pass reads dout once.
  double bias_bytes() const { return double(M()) * double(OC) * sizeof(float); }
};

// Row-major host arrays, as llm.c's buffers. All uniform in [-1, 1] from a
// fixed seed; the initial gradients are random (non-zero) too, so that an
// implementation that overwrites instead of accumulating fails validation.
struct HostInputs {
  Shape shape;
  std::vector<float> dout;    // M × OC
  std::vector<float> inp;     // M × C
  std::vector<float> weight;  // OC × C
  std::vector<float> dinp0;     // M × C, initial gradients
  std::vector<float> dweight0;  // OC × C
  std::vector<float> dbias0;    // OC
};

HostInputs make_inputs(const Shape& shape, unsigned seed = 1337);

}  // namespace llmk::perf
