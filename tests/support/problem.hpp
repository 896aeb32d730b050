// The tests' view of llmk_matmul_backward_reference (shared with the perf
// driver): shapes, random host problems, the float64 reference.
#pragma once

#include <ops/matmul_backward/reference/problem.hpp>
#include <ops/matmul_backward/reference/reference.hpp>

namespace llmk_test {

using llmk::reference::fill_random;
using llmk::reference::Gradients64;
using llmk::reference::HostProblem;
using llmk::reference::make_problem;
using llmk::reference::reference_backward;
using llmk::reference::seed_shape;
using llmk::reference::Shape;
using llmk::reference::test_shapes;

}  // namespace llmk_test
