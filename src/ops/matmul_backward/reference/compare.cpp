#include <ops/matmul_backward/reference/compare.hpp>

namespace llmk::reference {

double tolerance(Precision precision, Output output) {
  if (precision == Precision::tf32) return kTf32Tolerance;
  return bf16_output(precision, output) ? kBf16Tolerance : kFloat32Tolerance;
}

double pair_tolerance(Precision precision, Output output) {
  return 2 * tolerance(precision, output);
}

}  // namespace llmk::reference
