#include <ops/attention_backward/reference/compare.hpp>

#include <stdexcept>
#include <string>

namespace llmk::reference::attention {

double tolerance(Precision precision) {
  if (precision == Precision::fp32) return kFloat32Tolerance;
  if (precision == Precision::tf32) return kTf32Tolerance;
  if (precision == Precision::bf16) return kBf16Tolerance;
  throw std::invalid_argument(std::string("llmk::reference::attention: ") +
                              precision_name(precision) +
                              " is not a precision of attention_backward (fp32, tf32, bf16)");
}

double pair_tolerance(Precision precision) { return 2 * attention::tolerance(precision); }

double recompute_tolerance(Precision precision) { return attention::tolerance(precision); }

double recompute_vs_materialized_tolerance(Precision precision) {
  return precision == Precision::bf16 ? 4 * kBf16Tolerance : pair_tolerance(precision);
}

}  // namespace llmk::reference::attention
