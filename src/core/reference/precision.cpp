#include <core/reference/precision.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace llmk::reference {

const char* precision_name(Precision precision) {
  switch (precision) {
    case Precision::fp32: return "fp32";
    case Precision::tf32: return "tf32";
    case Precision::bf16: return "bf16";
    case Precision::bf16_fp32grad: return "bf16-fp32grad";
  }
  return "?";
}

bool parse_precision(std::string_view name, Precision& precision) {
  for (Precision p : all_precisions()) {
    if (name == precision_name(p)) {
      precision = p;
      return true;
    }
  }
  return false;
}

const std::vector<Precision>& all_precisions() {
  static const std::vector<Precision> all = {Precision::fp32, Precision::tf32, Precision::bf16,
                                             Precision::bf16_fp32grad};
  return all;
}

void require_precision(Precision precision, std::initializer_list<Precision> allowed,
                       std::string_view operation) {
  if (std::find(allowed.begin(), allowed.end(), precision) != allowed.end()) return;
  const std::string op(operation);
  throw std::invalid_argument("llmk::reference::" + op + ": " + precision_name(precision) +
                              " is not a precision of " + op);
}

const char* output_name(Output output) {
  switch (output) {
    case Output::dinp: return "dinp";
    case Output::dweight: return "dweight";
    case Output::dbias: return "dbias";
  }
  return "?";
}

bool bf16_inputs(Precision precision) {
  return precision == Precision::bf16 || precision == Precision::bf16_fp32grad;
}

bool bf16_output(Precision precision, Output output) {
  return precision == Precision::bf16 ||
         (precision == Precision::bf16_fp32grad && output == Output::dinp);
}

}  // namespace llmk::reference
