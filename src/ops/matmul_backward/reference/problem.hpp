// Host problems of llmk::matmul_backward, shared by the tests and the perf
// driver: shapes, random inputs and random initial gradients.
// Part of llmk_matmul_backward_reference, a static library that is not
// installed and depends on neither llmk nor Kokkos (plain C++17).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace llmk::reference {

// The precision configurations of llmk::matmul_backward, and how products
// are computed:
//   fp32           everything float, float32 products
//   tf32           everything float, products on TF32 tensor cores (Math::tf32)
//   bf16           everything bf16 (inputs, dinp, dweight, dbias)
//   bf16_fp32grad  inputs and dinp bf16, dweight and dbias float ("bf16-fp32grad")
enum class Precision { fp32, tf32, bf16, bf16_fp32grad };
// "fp32", "tf32", "bf16", "bf16-fp32grad"
const char* precision_name(Precision precision);
// The inverse of precision_name; false (and `precision` unchanged) for any other string.
bool parse_precision(std::string_view name, Precision& precision);
// All four, in the order above.
const std::vector<Precision>& all_precisions();

// The three outputs, and their names ("dinp", "dweight", "dbias").
enum class Output { dinp, dweight, dbias };
const char* output_name(Output output);

// Element types: whether inputs (dout, inp, weight, pre_gelu) are bf16, and
// whether an output is bf16, in a configuration.
bool bf16_inputs(Precision precision);
bool bf16_output(Precision precision, Output output);

// bfloat16 on the host, independent of llmk's llmk::bf16 (a test of the one
// must not rely on the other): the top 16 bits of a float32.
//  - float_to_bf16_bits: round to nearest, ties to even; NaN stays NaN (quiet,
//    sign kept), ±Inf stays ±Inf, finite values that round past bf16's largest
//    finite value (0x7f7f, 3.3895e38) become ±Inf.
//  - bf16_bits_to_float: exact.
//  - round_to_bf16(x) = bf16_bits_to_float(float_to_bf16_bits(x)).
std::uint16_t float_to_bf16_bits(float x);
float bf16_bits_to_float(std::uint16_t bits);
float round_to_bf16(float x);
// Every element of a bf16 buffer (read as uint16) widened to float; and back.
std::vector<float> widen_bf16(const std::uint16_t* bits, std::size_t count);
std::vector<std::uint16_t> narrow_to_bf16(const std::vector<float>& values);

// A problem's sizes: dout and out are B×T×OC, inp B×T×C, weight OC×C.
struct Shape {
  std::string name;  // part of test names: letters, digits and '_' only
  std::int64_t B = 0, T = 0, C = 0, OC = 0;
  bool bias = true;  // false: no bias gradient (an empty dbias view, or nullptr)

  std::int64_t M() const { return B * T; }
  // One backward pass: two GEMMs of 2·M·C·OC flops each, plus M·OC adds for dbias.
  double flops() const;
  // Bytes the bias pass reads: all of dout (0 without bias).
  double bias_bytes() const;
};

// The shapes every implementation is checked on (problem.cpp says why each).
const std::vector<Shape>& test_shapes();
// The shape of llm.c's dev/cuda/matmul_backward.cu: B=8, T=1024, C=768, OC=3072.
Shape seed_shape();

// Everything matmul_backward reads, and the values the gradients start from,
// as row-major host arrays (llm.c's layout).
// Values that the problem's element types hold exactly: in a bf16 configuration
// the inputs and pre_gelu are bf16-representable (round_to_bf16(x) == x), and
// so are the initial gradients of the outputs that are bf16; llmk's call gets
// them converted without loss, and the reference sees the very same values.
struct HostProblem {
  Shape shape;
  std::vector<float> dout, inp, weight;     // inputs: M×OC, M×C, OC×C
  std::vector<float> dinp, dweight, dbias;  // initial gradients: M×C, OC×C, OC (empty without bias)
  // (Members above in their old order: aggregate initializations stay valid.)
  Precision precision = Precision::fp32;    // the configuration the values are made for
  bool gelu = false;                        // dinp is the gradient of pre_gelu (GELU's input)
  std::vector<float> pre_gelu;              // M×C with gelu, else empty
};

struct ProblemOptions {
  Precision precision = Precision::fp32;
  bool gelu = false;  // make pre_gelu
};

// Uniform in [-1, 1) and never 0, from std::mt19937 (whose sequence the C++
// standard fixes; no std::*_distribution, whose output is not), so a seed gives
// the same values on every platform.
void fill_random(std::vector<float>& values, std::uint32_t seed);
void fill_random(float* values, std::size_t count, std::uint32_t seed);

// Random non-zero inputs AND random non-zero initial gradients: gradients
// accumulate (+=), and an element an implementation fails to write keeps its
// initial value, which the reference includes, so it shows as an error.
// Each array has its own stream (derived from `seed`); a precision's problem
// holds the fp32 problem's values rounded to bf16 where the type is bf16
// (never 0: bf16 has float32's exponent range). With options.gelu, pre_gelu is
// uniform in [-3, 3) (where gelu' goes from -0.012 at -3 through its minimum
// -0.128 near -1.5, 0.5 at 0 and its maximum 1.128 near 1.5 to 1.012 at 3:
// gelu'(-x) = 1 - gelu'(x)), from a seventh stream,
// independent of inp (a kernel that took gelu' of inp instead would show).
HostProblem make_problem(const Shape& shape, std::uint32_t seed = 2024,
                         const ProblemOptions& options = {});

}  // namespace llmk::reference
