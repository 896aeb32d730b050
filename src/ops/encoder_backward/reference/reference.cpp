#include <ops/encoder_backward/reference/reference.hpp>

#include <core/reference/bf16.hpp>
#include <core/reference/random.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <stdexcept>

namespace llmk::reference::encoder {
namespace {

void check_precision(Precision p) {
  if (p == Precision::tf32)
    throw std::invalid_argument("llmk::reference::encoder: tf32 is not a precision of encoder_backward");
}

int draw_token(const Shape& s, std::mt19937& rng) {
  const auto V = std::uint64_t(s.V);
  switch (s.tokens) {
    case Tokens::same: return int(V - 1);
    case Tokens::absent: {
      if (V < 3) return int(V - 1);  // (no token to leave out but 0)
      for (;;) {
        const int t = int(rng() % V);
        if (t % 3 != 0) return t;
      }
    }
    case Tokens::zipf: {
      // Inverse transform of P(v) ∝ 1/(v + 1), v < V: v + 1 ≈ (V + 1)^u.
      const double u = double(rng()) / 4294967296.0;
      const int t = int(std::floor(std::pow(double(V) + 1.0, u))) - 1;
      return std::min<int>(std::max(t, 0), int(V - 1));
    }
    case Tokens::uniform: break;
  }
  return int(rng() % V);
}

}  // namespace

double Shape::bytes(Precision p, bool overwrite, std::int64_t distinct) const {
  check_precision(p);
  const double in = p == Precision::fp32 ? 4.0 : 2.0, grad = p == Precision::bf16 ? 2.0 : 4.0;
  const double rw = overwrite ? 1.0 : 2.0;
  const double dwte_rows = overwrite ? double(V) : double(distinct);
  return double(M() * C) * in + double(M()) * 4.0 + (dwte_rows + double(T)) * double(C) * grad * rw;
}

const std::vector<Shape>& test_shapes() {
  static const std::vector<Shape> shapes = {
      {"odd", 3, 5, 7, 11},                       // tokens repeat: buckets of ~1-3
      {"absent", 4, 9, 12, 30, Tokens::absent},   // a third of the vocabulary absent
      {"same", 3, 50, 9, 17, Tokens::same},       // one bucket of all 150 positions
      {"V1", 2, 6, 5, 1},                         // V = 1: the only token is 0
      {"T1", 5, 1, 13, 8},                        // one position per sequence: dwpe one row
      {"zipf", 4, 64, 33, 500, Tokens::zipf},     // long buckets and singletons
      // Adjacent buckets past 32 positions (~134, 78, 55, 43, 35 for tokens
      // 0-4): summed in runs of 32, each bucket's runs' sums in rows of their own
      {"runs", 4, 256, 5, 200, Tokens::zipf},
      {"wideV", 2, 8, 4, 3000},                   // most of dwte untouched
  };
  return shapes;
}

const std::vector<Shape>& empty_shapes() {
  static const std::vector<Shape> shapes = {
      {"B0", 0, 4, 8, 5},  // no positions: dwpe (T × C) keeps its values (or is zeroed)
      {"C0", 2, 3, 0, 5},  // no channels: the tokens are still checked
  };
  return shapes;
}

Shape gpt2_shape() { return {"gpt2_124M", 8, 1024, 768, 50257, Tokens::zipf}; }

HostProblem make_problem(const Shape& s, std::uint32_t seed, Precision precision) {
  check_precision(precision);
  HostProblem p;
  p.shape = s;
  p.precision = precision;
  p.dout.resize(std::size_t(s.M() * s.C));
  p.dwte.resize(std::size_t(s.V * s.C));
  p.dwpe.resize(std::size_t(s.T * s.C));
  fill_random(p.dout, seed * 16);
  fill_random(p.dwte, seed * 16 + 1);
  fill_random(p.dwpe, seed * 16 + 2);
  std::mt19937 rng(seed * 16 + 3);
  p.tokens.resize(std::size_t(s.M()));
  for (int& t : p.tokens) t = draw_token(s, rng);
  if (precision != Precision::fp32) round_to_bf16(p.dout);
  if (precision == Precision::bf16) {
    round_to_bf16(p.dwte);
    round_to_bf16(p.dwpe);
  }
  return p;
}

Gradients64 reference_backward(const HostProblem& p, bool overwrite_dwte, bool overwrite_dwpe) {
  const Shape& s = p.shape;
  const std::size_t C = std::size_t(s.C), T = std::size_t(s.T);
  if (p.dout.size() != std::size_t(s.M()) * C || p.tokens.size() != std::size_t(s.M()) ||
      p.dwte.size() != std::size_t(s.V) * C || p.dwpe.size() != T * C)
    throw std::invalid_argument("llmk::reference::encoder: an array's size does not match the shape");
  Gradients64 g;
  g.dwte.assign(p.dwte.begin(), p.dwte.end());
  g.dwpe.assign(p.dwpe.begin(), p.dwpe.end());
  if (overwrite_dwte) std::fill(g.dwte.begin(), g.dwte.end(), 0.0);
  if (overwrite_dwpe) std::fill(g.dwpe.begin(), g.dwpe.end(), 0.0);
  for (std::size_t i = 0; i < p.tokens.size(); ++i) {
    const int v = p.tokens[i];
    if (v < 0 || v >= s.V) throw std::invalid_argument("llmk::reference::encoder: a token outside [0, V)");
    for (std::size_t c = 0; c < C; ++c) {
      const double d = p.dout[i * C + c];
      g.dwte[std::size_t(v) * C + c] += d;
      g.dwpe[(i % T) * C + c] += d;
    }
  }
  return g;
}

std::int64_t distinct_tokens(const HostProblem& p) {
  return std::int64_t(std::set<int>(p.tokens.begin(), p.tokens.end()).size());
}

double tolerance(Precision precision, bool bf16_output) {
  check_precision(precision);
  return bf16_output ? kBf16Tolerance : kFloat32Tolerance;
}

}  // namespace llmk::reference::encoder
