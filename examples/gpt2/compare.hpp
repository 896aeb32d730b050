// Every gradient against its reference: relative L2 per tensor,
// ‖got − want‖₂ / ‖want‖₂, printed as a table.
#pragma once

#include "model.hpp"

#include <cstdio>

namespace gpt2 {

struct Comparison {
  std::string name;
  double ref_norm = 0, rel_l2 = 0, max_abs = 0;
  bool pass = false;
};

// For each of `specs`: got[name] against want[name]; a tensor missing on
// either side fails. rel_l2 is absolute where ‖want‖₂ = 0.
std::vector<Comparison> compare_tensors(const std::vector<TensorSpec>& specs, const Doubles& got,
                                        const Doubles& want, double tolerance);
// The same over gradient_specs(cfg).
std::vector<Comparison> compare_gradients(const Config& cfg, const Doubles& got,
                                          const Doubles& want, double tolerance);
// Prints the table, its first column headed `what` ("gradient"); returns
// whether every tensor passed.
bool print_comparisons(std::FILE* out, const std::vector<Comparison>& rows, double tolerance,
                       const char* what = "gradient");

double relative_l2(const std::vector<double>& got, const std::vector<double>& want);

}  // namespace gpt2
