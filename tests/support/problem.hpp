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

// The shapes of matmul_backward's contract tests (support/matmul_backward_adapter.hpp
// runs each in every implementation × precision × GELU off and on) and of the
// tolerances' simulation (test_reference.cpp): the reference library's
// test_shapes() that have products or a dbias to sum (tiny, odd, mid,
// gpt2qkv, lmhead, longM, longOC, nobias; C0, whose dbias still gets Σ dout),
// and the odd ones:
inline const std::vector<Shape>& accuracy_shapes() {
  static const std::vector<Shape> shapes = [] {
    std::vector<Shape> v;
    for (const Shape& s : test_shapes())
      if (s.M() > 0 && s.OC > 0) v.push_back(s);
    v.push_back({"C1", 2, 9, 1, 13});         // one input feature: dinp and dweight are columns
    v.push_back({"M1", 1, 1, 37, 29});        // one row
    v.push_back({"wideOC", 1, 3, 10, 50257}); // GPT-2's vocabulary (odd), few rows
    // The seed's and GPT-2 training's longest sums (M = B·T = 8192), in CI:
    // bf16's per-element bounds and TF32's tolerance at K = 8192, on few
    // elements (a K = 8192 sum that one missing product must fail).
    v.push_back({"longM8k", 1, 8192, 3, 5});   // dweight, dbias: sums over 8192 rows
    v.push_back({"longOC8k", 1, 3, 5, 8192});  // dinp: sums over 8192 columns
    return v;
  }();
  return shapes;
}

// The zero-sized ones without any sum (B0, T0: no rows; OC0: no columns of
// dout): valid no-ops, whose overwritten outputs are written with zeros.
inline const std::vector<Shape>& empty_shapes() {
  static const std::vector<Shape> shapes = [] {
    std::vector<Shape> v;
    for (const Shape& s : test_shapes())
      if (s.M() == 0 || s.OC == 0) v.push_back(s);
    return v;
  }();
  return shapes;
}

}  // namespace llmk_test
