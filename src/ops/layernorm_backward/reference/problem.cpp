#include <ops/layernorm_backward/reference/problem.hpp>

#include <cmath>
#include <cstddef>
#include <stdexcept>

namespace llmk::reference::layernorm {
namespace {

void check_precision(Precision precision) {
  if (precision == Precision::tf32)
    throw std::invalid_argument(
        "llmk::reference::layernorm: tf32 is not a precision of layernorm_backward");
}

// Bytes of one element of an input, or of an output.
double input_size(Precision p) { return bf16_inputs(p) ? 2.0 : 4.0; }
double output_size(Precision p, Output o) { return bf16_output(p, o) ? 2.0 : 4.0; }

}  // namespace

double Shape::bytes(Precision p, bool overwrite_dinp) const {
  check_precision(p);
  const double m = double(M()), c = double(C);
  const double activations = 2.0 * m * c * input_size(p)  // dout, inp
                             + (overwrite_dinp ? 1.0 : 2.0) * m * c * output_size(p, Output::dinp);
  const double parameters = c * input_size(p)  // weight
                            + 2.0 * c * output_size(p, Output::dweight) +
                            (bias ? 2.0 * c * output_size(p, Output::dbias) : 0.0);
  return activations + parameters + 2.0 * m * sizeof(float);  // + mean, rstd
}

const std::vector<Shape>& test_shapes() {
  static const std::vector<Shape> shapes = {
      // C = 1: each row is its own mean, so norm = 0 exactly, rstd = 1/√1e-5
      // ≈ 316 and dinp gets rstd·(dnorm − dnorm − 0) = 0: an implementation
      // that divides by C − 1 (unbiased variance) or drops a mean term shows.
      {"C1", 2, 3, 1},
      {"odd", 3, 5, 7},       // small primes: C not a multiple of 4 or 8 (packed loads' tails)
      {"C36", 2, 5, 36},      // a multiple of 4 (float packs of 16 bytes), not of 8 (bf16 packs)
      {"gpt2", 2, 3, 768},    // GPT-2 124M's C: a multiple of every pack and of 32 lanes × 8
      // Long column sums, over more rows than one scratch chunk (1024 on a CPU,
      // 2048 on a GPU) holds, ending partway through the last:
      {"longM", 3, 700, 5},   // dweight and dbias sum over M = 2100 rows
      {"M1", 1, 1, 129},      // one row: column sums of one term; C just past 2⁷
      {"nobias", 3, 5, 7, false},  // no bias gradient: empty dbias view / nullptr
      {"C1600", 2, 3, 1600},  // GPT-2 1558M's C: not a power of two, 50 warps of 32
      // C = 3·1024 + 1: a row wider than a block of 1024 threads covers in three
      // passes, one element left over; dinp's row means sum 3073 terms.
      {"wideC", 1, 3, 3073},
  };
  return shapes;
}

const std::vector<Shape>& empty_shapes() {
  static const std::vector<Shape> shapes = {
      {"B0", 0, 4, 8},  // no rows: dweight and dbias keep their values (or are zeroed)
      {"C0", 2, 3, 0},  // rows of nothing: mean and rstd have elements, no output does
  };
  return shapes;
}

std::vector<Shape> gpt2_shapes() {
  return {{"gpt2_124M", 8, 1024, 768}, {"gpt2_1558M", 8, 1024, 1600}};
}

HostProblem make_problem(const Shape& s, std::uint32_t seed, Precision precision) {
  check_precision(precision);
  HostProblem p;
  p.shape = s;
  p.precision = precision;
  const std::size_t M = std::size_t(s.M()), C = std::size_t(s.C);
  p.dout.resize(M * C);
  p.inp.resize(M * C);
  p.weight.resize(C);
  p.dinp.resize(M * C);
  p.dweight.resize(C);
  p.dbias.resize(s.bias ? C : 0);
  std::vector<float> offset(M), scale(M);
  // A different stream per array, so no two arrays hold the same values.
  std::vector<float>* arrays[] = {&p.dout, &p.inp,    &p.weight, &p.dinp,
                                  &p.dweight, &p.dbias, &offset,   &scale};
  for (std::uint32_t i = 0; i < 8; ++i) fill_random(*arrays[i], seed * 16 + i);
  for (std::size_t m = 0; m < M; ++m) {
    // [-1, 1) → offset in [-2, 2), scale in [0.5, 2) (1.25 + 0.75·x, in double
    // then rounded: < 2 for every x < 1).
    const float o = 2.0f * offset[m], k = float(1.25 + 0.75 * double(scale[m]));
    for (std::size_t c = 0; c < C; ++c) p.inp[m * C + c] = o + k * p.inp[m * C + c];
  }
  if (bf16_inputs(precision)) {
    for (std::vector<float>* v : {&p.dout, &p.inp, &p.weight}) round_to_bf16(*v);
  }
  if (bf16_output(precision, Output::dinp)) round_to_bf16(p.dinp);
  if (bf16_output(precision, Output::dweight)) round_to_bf16(p.dweight);
  if (bf16_output(precision, Output::dbias)) round_to_bf16(p.dbias);
  // The forward's statistics of the (rounded) inp: two passes in double.
  p.mean.resize(M);
  p.rstd.resize(M);
  for (std::size_t m = 0; m < M; ++m) {
    const float* x = p.inp.data() + m * C;
    double sum = 0.0;
    for (std::size_t c = 0; c < C; ++c) sum += double(x[c]);
    const double mean = C > 0 ? sum / double(C) : 0.0;
    double squares = 0.0;
    for (std::size_t c = 0; c < C; ++c) squares += (double(x[c]) - mean) * (double(x[c]) - mean);
    const double var = C > 0 ? squares / double(C) : 0.0;
    p.mean[m] = float(mean);
    p.rstd[m] = float(1.0 / std::sqrt(var + 1e-5));
  }
  return p;
}

}  // namespace llmk::reference::layernorm
