#include <ops/matmul_backward/reference/problem.hpp>

#include <cmath>
#include <cstring>
#include <random>

namespace llmk::reference {

const char* precision_name(Precision precision) {
  switch (precision) {
    case Precision::fp32: return "fp32";
    case Precision::tf32: return "tf32";
    case Precision::bf16: return "bf16";
    case Precision::bf16_fp32grad: return "bf16-fp32grad";
  }
  return "?";
}

bool parse_precision(std::string_view name, Precision& precision) {
  for (Precision p : all_precisions()) {
    if (name == precision_name(p)) {
      precision = p;
      return true;
    }
  }
  return false;
}

const std::vector<Precision>& all_precisions() {
  static const std::vector<Precision> all = {Precision::fp32, Precision::tf32, Precision::bf16,
                                             Precision::bf16_fp32grad};
  return all;
}

const char* output_name(Output output) {
  switch (output) {
    case Output::dinp: return "dinp";
    case Output::dweight: return "dweight";
    case Output::dbias: return "dbias";
  }
  return "?";
}

bool bf16_inputs(Precision precision) {
  return precision == Precision::bf16 || precision == Precision::bf16_fp32grad;
}

bool bf16_output(Precision precision, Output output) {
  return precision == Precision::bf16 ||
         (precision == Precision::bf16_fp32grad && output == Output::dinp);
}

std::uint16_t float_to_bf16_bits(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  const std::uint32_t sign = u & 0x80000000u, magnitude = u & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return std::uint16_t((sign >> 16) | 0x7fc0u);  // NaN: quiet
  if (magnitude == 0x7f800000u) return std::uint16_t(u >> 16);                // ±Inf
  // Keep the top 16 bits; the 16 dropped ones decide: above half an ulp up,
  // below down, exactly half to the even neighbour. A carry out of the
  // mantissa moves to the next binade (or to Inf), as it should.
  std::uint32_t kept = magnitude >> 16;
  const std::uint32_t dropped = magnitude & 0xffffu;
  if (dropped > 0x8000u || (dropped == 0x8000u && (kept & 1u))) ++kept;
  return std::uint16_t((sign >> 16) | kept);
}

float bf16_bits_to_float(std::uint16_t bits) {
  const std::uint32_t u = std::uint32_t(bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

float round_to_bf16(float x) { return bf16_bits_to_float(float_to_bf16_bits(x)); }

std::vector<float> widen_bf16(const std::uint16_t* bits, std::size_t count) {
  std::vector<float> out(count);
  for (std::size_t i = 0; i < count; ++i) out[i] = bf16_bits_to_float(bits[i]);
  return out;
}

std::vector<std::uint16_t> narrow_to_bf16(const std::vector<float>& values) {
  std::vector<std::uint16_t> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = float_to_bf16_bits(values[i]);
  return out;
}

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

void fill_random(float* values, std::size_t count, std::uint32_t seed) {
  std::mt19937 rng(seed);
  for (std::size_t i = 0; i < count; ++i) {
    float v;
    do {
      // 24 random bits → a float in [0, 1) exactly, then [-1, 1).
      v = float(rng() >> 8) * (1.0f / 16777216.0f) * 2.0f - 1.0f;
    } while (v == 0.0f);
    values[i] = v;
  }
}

void fill_random(std::vector<float>& values, std::uint32_t seed) {
  fill_random(values.data(), values.size(), seed);
}

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
  const auto round_all = [](std::vector<float>& v) {
    for (float& x : v) x = round_to_bf16(x);
  };
  if (bf16_inputs(p.precision)) {
    for (std::vector<float>* v : {&p.dout, &p.inp, &p.weight, &p.pre_gelu}) round_all(*v);
  }
  if (bf16_output(p.precision, Output::dinp)) round_all(p.dinp);
  if (bf16_output(p.precision, Output::dweight)) round_all(p.dweight);
  if (bf16_output(p.precision, Output::dbias)) round_all(p.dbias);
  return p;
}

}  // namespace llmk::reference
