// Host problems of llmk::encoder_backward, its float64 reference and its
// tolerances, shared by the tests and the perf driver. Part of
// llmk_encoder_backward_reference (plain C++17, not installed).
#pragma once

#include <core/reference/compare.hpp>
#include <core/reference/precision.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace llmk::reference::encoder {

using llmk::reference::Precision;  // fp32, bf16, bf16_fp32grad (not tf32)

// How a problem's tokens are drawn.
enum class Tokens {
  uniform,  // uniform in [0, V)
  absent,   // uniform in [0, V) but every token ≡ 0 mod 3 left out
  same,     // every position holds token V − 1
  zipf,     // P(v) ∝ 1/(v + 1): a few long buckets, as text has
};

struct Shape {
  std::string name;  // part of test names
  std::int64_t B = 0, T = 0, C = 0, V = 0;
  Tokens tokens = Tokens::uniform;

  std::int64_t M() const { return B * T; }
  // Bytes a call must move at least: dout read, tokens read, the touched rows
  // of dwte (the distinct tokens' rows; all V·C when overwritten) and dwpe
  // written (and read unless overwritten).
  double bytes(Precision p, bool overwrite, std::int64_t distinct_tokens) const;
};

const std::vector<Shape>& test_shapes();
const std::vector<Shape>& empty_shapes();
// GPT-2 124M at llm.c's training batch: B 8, T 1024, C 768, V 50257 (zipf tokens).
Shape gpt2_shape();

struct HostProblem {
  Shape shape;
  Precision precision = Precision::fp32;
  std::vector<float> dout;  // M × C
  std::vector<int> tokens;  // M
  std::vector<float> dwte, dwpe;  // initial gradients, V × C and T × C
};

// dout and the initial gradients random non-zero in [-1, 1) (fill_random),
// bf16-representable where the configuration's type is bf16; tokens by
// shape.tokens from their own stream.
HostProblem make_problem(const Shape& s, std::uint32_t seed = 2024,
                         Precision precision = Precision::fp32);

struct Gradients64 {
  std::vector<double> dwte, dwpe;
};
// initial gradients (unless overwritten: zeros) + the sums, in double.
Gradients64 reference_backward(const HostProblem& p, bool overwrite_dwte = false,
                               bool overwrite_dwpe = false);

// The distinct tokens of p.
std::int64_t distinct_tokens(const HostProblem& p);

// Relative L2 of each output: sums of up to B·T rows in float, the shared
// bound's terms (core/reference/compare.hpp: kFloat32Tolerance bounds sums
// of ~10⁵ terms; one bf16 rounding: kBf16Tolerance). An output's untouched
// rows (tokens absent: dwte keeps its initial value or 0 exactly) count in
// the L2 as exact elements.
double tolerance(Precision precision, bool bf16_output);

}  // namespace llmk::reference::encoder
