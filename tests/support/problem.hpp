// The tests' view of llmk_matmul_backward_reference (shared with the perf
// driver): shapes, random host problems, the float64 reference.
#pragma once

#include <ops/matmul_backward/reference/compare.hpp>
#include <ops/matmul_backward/reference/problem.hpp>
#include <ops/matmul_backward/reference/reference.hpp>

#include <vector>

namespace llmk_test {

using llmk::reference::all_precisions;
using llmk::reference::fill_random;
using llmk::reference::Gradients64;
using llmk::reference::HostProblem;
using llmk::reference::make_problem;
using llmk::reference::Output;
using llmk::reference::pair_tolerance;
using llmk::reference::Precision;
using llmk::reference::precision_name;
using llmk::reference::ProblemOptions;
using llmk::reference::reference_backward;
using llmk::reference::seed_shape;
using llmk::reference::Shape;
using llmk::reference::test_shapes;
using llmk::reference::tolerance;
using llmk::reference::Updates;

// The shapes of the precision, GELU and overwrite tests (each runs on every
// implementation × every precision it declares × GELU on and off: a subset,
// to keep the suite fast), with the odd ones:
inline const std::vector<Shape>& precision_shapes() {
  static const std::vector<Shape> shapes = {
      {"odd", 3, 5, 7, 11},          // small primes
      {"mid", 5, 37, 129, 65},       // partial blocks and chunks
      {"longM", 3, 700, 3, 7},       // dweight and dbias sum over 2100 rows
      {"longOC", 1, 5, 3, 2050},     // dinp sums over 2050 columns
      {"C1", 2, 9, 1, 13},           // one input feature: dinp and dweight are columns
      {"M1", 1, 1, 37, 29},          // one row
      {"wideOC", 1, 3, 10, 50257},   // GPT-2's vocabulary (odd), few rows
      {"nobias", 2, 7, 9, 5, false}, // no dbias
  };
  return shapes;
}

// Zero-sized dimensions: with overwrite, the outputs that have elements are
// still written (dinp with OC = 0: zeros; dbias with C = 0: Σ dout).
inline const std::vector<Shape>& empty_shapes() {
  static const std::vector<Shape> shapes = {
      {"B0", 0, 4, 8, 16}, {"C0", 2, 3, 0, 5}, {"OC0", 2, 3, 4, 0}};
  return shapes;
}

}  // namespace llmk_test
