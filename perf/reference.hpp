// The float64 reference every implementation and peer is validated against:
// ref = initial gradients + the exact products, computed with OpenBLAS's dgemm
// on double copies of the inputs (affordable at the seed shape on 2 cores,
// unlike the seed's triple loops in double).
#pragma once

#include "inputs.hpp"

#include <vector>

namespace llmk::perf {

// Relative error tolerated per output, ‖out − ref‖₂ / ‖ref‖₂. A float32 dot
// product of K random-sign terms drifts from the exact value by about
// sqrt(K)·2^-24 relative (≈ 5e-6 at K = M = 8192), so correct float32 code,
// however it orders its sums, stays well below 1e-4; an indexing or
// accumulation bug is off by O(1), and TF32 (10 mantissa bits, ≈ 1e-3) fails.
constexpr double kTolerance = 1e-4;

struct Reference {
  std::vector<double> dinp;     // M × C
  std::vector<double> dweight;  // OC × C
  std::vector<double> dbias;    // OC
};

// Uses OpenBLAS with however many threads it is set to.
Reference compute_reference(const HostInputs& in);

struct Errors {
  double dinp = 0, dweight = 0, dbias = 0;  // relative L2 error of each output
  double max() const;
};

// Host pointers to an implementation's outputs (after one call on fresh
// copies of the initial gradients).
Errors compare(const Reference& ref, const float* dinp, const float* dweight, const float* dbias);

}  // namespace llmk::perf
