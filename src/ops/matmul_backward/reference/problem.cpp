#include <ops/matmul_backward/reference/problem.hpp>

#include <cstddef>

namespace llmk::reference {

double Shape::flops() const {
  const double m = double(M()), c = double(C), oc = double(OC);
  return 4.0 * m * c * oc + (bias ? m * oc : 0.0);
}

double Shape::bias_bytes() const { return bias ? double(M()) * double(OC) * sizeof(float) : 0.0; }

const std::vector<Shape>& test_shapes() {
  static const std::vector<Shape> shapes = {
      {"tiny", 1, 1, 1, 1},            // one element of everything
      {"odd", 3, 5, 7, 11},            // small primes: no extent divides another
      {"mid", 5, 37, 129, 65},         // C, OC just past powers of two: partial blocks, chunks
      {"gpt2qkv", 2, 64, 96, 288},     // GPT-2's attention QKV projection (C→3C), scaled down
      {"lmhead", 1, 256, 64, 1001},    // tall LM head, OC not a multiple of 8 (or of a warp)
      // Long sums, over more rows than one scratch chunk (1024 on a CPU, 2048 on
      // a GPU) or one dbias segment holds, ending partway through the last:
      {"longM", 3, 700, 3, 7},         // dweight and dbias sum over M = 2100 rows
      {"longOC", 1, 5, 3, 2050},       // dinp sums over OC = 2050 columns
      {"nobias", 3, 5, 7, 11, false},  // no bias gradient: empty dbias view / nullptr
      {"B0", 0, 4, 8, 16},             // zero-sized dimensions: valid no-ops ...
      {"T0", 4, 0, 8, 16},
      {"C0", 2, 3, 0, 5},              // ... except that with C = 0 dbias still gets Σ dout
      {"OC0", 2, 3, 4, 0},
  };
  return shapes;
}

Shape seed_shape() { return {"seed", 8, 1024, 768, 3072}; }

HostProblem make_problem(const Shape& s, std::uint32_t seed, const ProblemOptions& options) {
  HostProblem p;
  p.shape = s;
  p.precision = options.precision;
  p.gelu = options.gelu;
  const auto n = [](std::int64_t a, std::int64_t b) { return std::size_t(a * b); };
  p.dout.resize(n(s.M(), s.OC));
  p.inp.resize(n(s.M(), s.C));
  p.weight.resize(n(s.OC, s.C));
  p.dinp.resize(n(s.M(), s.C));
  p.dweight.resize(n(s.OC, s.C));
  p.dbias.resize(s.bias ? std::size_t(s.OC) : 0);
  // A different stream per array, so no two arrays hold the same values.
  std::vector<float>* arrays[] = {&p.dout, &p.inp, &p.weight, &p.dinp, &p.dweight, &p.dbias};
  for (std::uint32_t i = 0; i < 6; ++i) fill_random(*arrays[i], seed * 16 + i);
  if (options.gelu) {
    p.pre_gelu.resize(n(s.M(), s.C));
    fill_random(p.pre_gelu, seed * 16 + 6);
    for (float& x : p.pre_gelu) x *= 3.0f;  // [-1, 1) → [-3, 3), never 0
  }
  if (bf16_inputs(p.precision)) {
    for (std::vector<float>* v : {&p.dout, &p.inp, &p.weight, &p.pre_gelu}) round_to_bf16(*v);
  }
  if (bf16_output(p.precision, Output::dinp)) round_to_bf16(p.dinp);
  if (bf16_output(p.precision, Output::dweight)) round_to_bf16(p.dweight);
  if (bf16_output(p.precision, Output::dbias)) round_to_bf16(p.dbias);
  return p;
}

}  // namespace llmk::reference
