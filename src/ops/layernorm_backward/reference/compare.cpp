#include <ops/layernorm_backward/reference/compare.hpp>

#include <stdexcept>

namespace llmk::reference::layernorm {

double tolerance(Precision precision, Output output) {
  if (precision == Precision::tf32)
    throw std::invalid_argument(
        "llmk::reference::layernorm: tf32 is not a precision of layernorm_backward");
  return bf16_output(precision, output) ? kBf16Tolerance : kFloat32Tolerance;
}

double pair_tolerance(Precision precision, Output output) {
  return 2 * layernorm::tolerance(precision, output);
}

}  // namespace llmk::reference::layernorm
