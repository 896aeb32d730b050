// The float64 reference of llmk::matmul_backward, shared by the tests and the
// perf driver. It is the seed's CPU loops (llm.c's matmul_backward_cpu) with
// every sum accumulated in double and starting from the initial gradients
// (dbias included: llmk accumulates it, where the seed's CPU code overwrote it).
// It shares no code with llmk's kernels. When CMake found OpenBLAS with its
// cblas.h (cmake/FindOpenBLASCblas.cmake), the two products can instead go
// through cblas_dgemm on double copies of the inputs: the same sums in double,
// affordable at the seed and LM-head shapes on 2 cores.
#pragma once

#include <ops/matmul_backward/reference/problem.hpp>

#include <cstdint>
#include <vector>

namespace llmk::reference {

struct Gradients64 {
  std::vector<double> dinp;     // M × C
  std::vector<double> dweight;  // OC × C
  std::vector<double> dbias;    // OC; empty when the shape has no bias
};

enum class Method {
  Auto,   // Blas when the library has it and the problem is large (≥ 2²⁴ multiply-adds), else Loops
  Loops,  // the seed's loops in double, on std::threads
  Blas,   // cblas_dgemm; std::logic_error if the library was built without OpenBLAS
};

// Whether this build of the library has the Blas method.
bool have_blas();
// "loops" or "OpenBLAS dgemm": what `method` uses for a problem of this size.
const char* method_name(Method method, const Shape& shape);

// Which outputs are overwritten (llmk's Update::overwrite): their initial
// values play no part. The others accumulate (+=, the default).
struct Updates {
  bool overwrite_dinp = false, overwrite_dweight = false, overwrite_dbias = false;
};

// initial gradients (unless overwritten) + the exact gradients of p, in
// double, from the very values in p (bf16-representable ones in a bf16
// problem: the reference computes with the values llmk receives). With GELU
// (p.gelu): dinp ⟵ (dout·weight) ⊙ gelu'(pre_gelu), gelu' of gelu_grad().
// NaN and Inf in the inputs propagate as in any correct implementation.
// Loops use `threads` std::threads (0: std::thread::hardware_concurrency());
// Blas uses however many threads OpenBLAS is set to.
Gradients64 reference_backward(const HostProblem& p, Method method = Method::Auto,
                               int threads = 0, const Updates& updates = {});

// d/dx of GPT-2's GELU, gelu(x) = ½·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), in
// double: ½·(1 + t) + ½·x·(1 − t²)·√(2/π)·(1 + 3·0.044715·x²), t = tanh(...).
// Written here from the formula, independently of llmk's kernels.
double gelu_grad(double x);

// The building block, for problems that are not a HostProblem (the M ≥ 2³¹
// test feeds it the few non-zero rows of a sparse problem): ADDS the
// gradients of M rows to dinp (M×C), dweight (OC×C) and dbias (OC; nullptr:
// none). Row-major float inputs; any size ≥ 0 (nothing is read for a zero one).
void accumulate_backward(const float* dout, const float* inp, const float* weight,
                         std::int64_t M, std::int64_t C, std::int64_t OC, double* dinp,
                         double* dweight, double* dbias, Method method = Method::Auto,
                         int threads = 0);

}  // namespace llmk::reference
