// Host problems of llmk::matmul_backward, shared by the tests and the perf
// driver: shapes, random inputs and random initial gradients.
// Part of llmk_matmul_backward_reference, a static library that is not
// installed and depends on neither llmk nor Kokkos (plain C++17); what is not
// matmul's is llmk_reference's (core/reference/), which it links.
#pragma once

#include <core/reference/bf16.hpp>
#include <core/reference/precision.hpp>
#include <core/reference/random.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace llmk::reference {

// Precision and Output (core/reference/precision.hpp: the configurations,
// and the element types in each: bf16_inputs, bf16_output), the host bf16
// helpers (core/reference/bf16.hpp) and fill_random
// (core/reference/random.hpp) are llmk_reference's, shared with the other
// operations; included here, as before, for every caller.

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
// Values that the problem's element types hold exactly: in a bf16 configuration
// the inputs and pre_gelu are bf16-representable (round_to_bf16(x) == x), and
// so are the initial gradients of the outputs that are bf16; llmk's call gets
// them converted without loss, and the reference sees the very same values.
struct HostProblem {
  Shape shape;
  std::vector<float> dout, inp, weight;     // inputs: M×OC, M×C, OC×C
  std::vector<float> dinp, dweight, dbias;  // initial gradients: M×C, OC×C, OC (empty without bias)
  // (Members above in their old order: aggregate initializations stay valid.)
  Precision precision = Precision::fp32;    // the configuration the values are made for
  bool gelu = false;                        // dinp is the gradient of pre_gelu (GELU's input)
  std::vector<float> pre_gelu;              // M×C with gelu, else empty
};

struct ProblemOptions {
  Precision precision = Precision::fp32;
  bool gelu = false;  // make pre_gelu
};

// Random non-zero inputs AND random non-zero initial gradients: gradients
// accumulate (+=), and an element an implementation fails to write keeps its
// initial value, which the reference includes, so it shows as an error.
// Each array has its own stream (derived from `seed`); a precision's problem
// holds the fp32 problem's values rounded to bf16 where the type is bf16
// (never 0: bf16 has float32's exponent range). With options.gelu, pre_gelu is
// uniform in [-3, 3) (where gelu' goes from -0.012 at -3 through its minimum
// -0.128 near -1.5, 0.5 at 0 and its maximum 1.128 near 1.5 to 1.012 at 3:
// gelu'(-x) = 1 - gelu'(x)), from a seventh stream,
// independent of inp (a kernel that took gelu' of inp instead would show).
HostProblem make_problem(const Shape& shape, std::uint32_t seed = 2024,
                         const ProblemOptions& options = {});

}  // namespace llmk::reference
