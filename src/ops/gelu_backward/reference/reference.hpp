// The float64 reference of llmk::gelu_backward and its tolerances, shared by
// the tests and the perf driver.
#pragma once

#include <core/reference/compare.hpp>
#include <ops/gelu_backward/reference/problem.hpp>

#include <vector>

namespace llmk::reference::gelu {

// initial dinp (unless overwritten: then zeros) + gelu'(inp) · dout, in
// double, from the very values in p; gelu' is matmul's reference's
// (llmk::reference::gelu_grad, written apart from llmk's kernels). NaN and
// Inf propagate. std::invalid_argument if an array's size is not N.
std::vector<double> reference_backward(const HostProblem& p, bool overwrite_dinp = false);

// Relative L2 of dinp against reference_backward, from the very inputs llmk
// receives:
//  - fp32: kFloat32Tolerance (5e-5). Each element is gelu'(x)·d in float:
//    tanhf (a few ulps; the device's own within 2 ulps), a dozen float
//    operations, the product and the add: a few u (u = 2⁻²⁴) relative to the
//    element's terms, not growing with N. The cancellations (½(1 + t) with
//    t → −1 below x = −3, and gelu' near its zero at −0.75) lose relative
//    accuracy on elements far below the array's rms, which the L2 measure
//    weighs by their size. Measured (float32 loops, tests/
//    test_gelu_reference.cpp): ≤ 1.2e-7 on every test shape.
//  - bf16: kBf16Tolerance (4e-3), the hard bound of one rounding of a
//    result within the float one.
// What they catch (random problems, make_problem): an element left with its
// initial value moves the L2 by ≈ 1/√N (0.098 at N = 105, 0.03 at 1031);
// gelu' with 0.04 for 0.044715: 1.3e-3 (fp32 fails; measured in
// test_gelu_reference.cpp), and ½·x·(1 − t²) for ½·x·(1 − t²)·s (√(2/π)
// dropped): > 0.1.
double tolerance(Precision precision);

}  // namespace llmk::reference::gelu
