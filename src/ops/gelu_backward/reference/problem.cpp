#include <ops/gelu_backward/reference/problem.hpp>

#include <stdexcept>

namespace llmk::reference::gelu {
namespace {

void check_precision(Precision p) {
  if (p != Precision::fp32 && p != Precision::bf16)
    throw std::invalid_argument(std::string("llmk::reference::gelu: ") + precision_name(p) +
                                " is not a precision of gelu_backward (fp32, bf16)");
}

}  // namespace

double Shape::bytes(Precision p, bool overwrite_dinp) const {
  check_precision(p);
  return (overwrite_dinp ? 3.0 : 4.0) * double(N()) * (p == Precision::bf16 ? 2.0 : 4.0);
}

const std::vector<Shape>& test_shapes() {
  static const std::vector<Shape> shapes = {
      {"one", 1, 1, 1},         // N = 1: no whole pack, one tail element
      {"odd", 3, 5, 7},         // N = 105: tails of 1 (fp32 packs of 4) and 1 (bf16 of 8)
      {"pack4", 1, 3, 36},      // N = 108: whole fp32 packs, bf16's tail of 4
      {"tail7", 1, 1, 1031},    // N = 8·128 + 7: the longest tail of a bf16 pack
      {"gpt2", 2, 3, 3072},     // GPT-2 124M's 4C: whole packs of every size
      {"long", 3, 700, 5},      // N = 10500 over many threads and blocks
  };
  return shapes;
}

const std::vector<Shape>& empty_shapes() {
  static const std::vector<Shape> shapes = {{"B0", 0, 4, 8}, {"C0", 2, 3, 0}};
  return shapes;
}

std::vector<Shape> gpt2_shapes() {
  return {{"gpt2_124M", 8, 1024, 3072}, {"gpt2_1558M", 8, 1024, 6400}};
}

HostProblem make_problem(const Shape& s, std::uint32_t seed, Precision precision) {
  check_precision(precision);
  HostProblem p;
  p.shape = s;
  p.precision = precision;
  const std::size_t N = std::size_t(s.N());
  p.dout.resize(N);
  p.inp.resize(N);
  p.dinp.resize(N);
  std::vector<float>* arrays[] = {&p.dout, &p.inp, &p.dinp};
  for (std::uint32_t i = 0; i < 3; ++i) fill_random(*arrays[i], seed * 16 + i);
  for (float& x : p.inp) x *= 4.0f;
  if (precision == Precision::bf16)
    for (std::vector<float>* v : arrays)
      round_to_bf16(*v);
  return p;
}

}  // namespace llmk::reference::gelu
