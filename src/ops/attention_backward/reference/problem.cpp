#include <ops/attention_backward/reference/problem.hpp>

#include <core/reference/parallel.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

namespace llmk::reference::attention {
namespace {

void check(const Shape& s, Precision precision) {
  if (precision != Precision::fp32 && precision != Precision::tf32 &&
      precision != Precision::bf16)
    throw std::invalid_argument(std::string("llmk::reference::attention: ") +
                                precision_name(precision) +
                                " is not a precision of attention_backward (fp32, tf32, bf16)");
  if (s.B < 0 || s.T < 0 || s.C < 0 || s.NH < 1 || s.C % s.NH != 0)
    throw std::invalid_argument("llmk::reference::attention: shape " + s.name +
                                " needs B, T, C >= 0, NH >= 1 and C a multiple of NH");
}

}  // namespace

double Shape::flops() const { return 4.0 * double(B) * double(C) * double(T) * double(T + 1); }

const std::vector<Shape>& test_shapes() {
  static const std::vector<Shape> shapes = {
      // One position: att = 1, so dpreatt = 1·(datt − datt) = 0 and dq = dk =
      // 0 exactly, dv = dout.
      {"T1", 2, 1, 8, 2},
      {"NH1", 2, 7, 5, 1},   // one head (HS = C = 5): head offsets all 0
      {"odd", 3, 5, 6, 2},   // small, HS = 3
      // HS = 13: not a multiple of a tile, a pack (4 floats, 8 bf16) or a
      // micro-tile's columns; T = 37 not of a tile's rows.
      {"HS13", 1, 37, 39, 3},
      {"gpt2_heads", 1, 16, 768, 12},  // GPT-2's heads: NH = 12 of HS = 64
      // T past one 128-row tile (host and GPU tiles): two tiles along each
      // T, the second of 2 rows; three, the last of one row.
      {"T130", 1, 130, 24, 2},
      {"T257", 1, 257, 16, 4},
      // Sequences as groups and T in blocks of query rows (cublas: 3 of 24
      // rows), every head and block 16-byte aligned: the pointer-array
      // launches.
      {"blocks", 2, 72, 32, 2},
  };
  return shapes;
}

const std::vector<Shape>& empty_shapes() {
  static const std::vector<Shape> shapes = {
      {"B0", 0, 4, 6, 2},  // no sequences: att has no elements either
      {"T0", 2, 0, 6, 2},  // sequences of no positions
      {"C0", 2, 3, 0, 2},  // no channels (HS = 0): att has elements, dqkv none
  };
  return shapes;
}

std::vector<Shape> gpt2_shapes() {
  return {{"gpt2_124M_T1024", 1, 1024, 768, 12}, {"gpt2_124M_B8", 8, 1024, 768, 12}};
}

double forward_row(const Shape& s, const std::vector<float>& qkv, std::int64_t b, std::int64_t h,
                   std::int64_t t, double* weights, double* out_row) {
  const std::int64_t T = s.T, C = s.C, HS = s.HS();
  const double scale = HS > 0 ? 1.0 / std::sqrt(double(HS)) : 1.0;
  const float* q = qkv.data() + (b * T + t) * 3 * C + h * HS;
  double most = -std::numeric_limits<double>::infinity();
  for (std::int64_t u = 0; u <= t; ++u) {
    const float* k = qkv.data() + (b * T + u) * 3 * C + C + h * HS;
    double dot = 0.0;
    for (std::int64_t d = 0; d < HS; ++d) dot += double(q[d]) * double(k[d]);
    weights[u] = dot * scale;  // the logit, for now
    most = std::max(most, weights[u]);
  }
  double sum = 0.0;
  for (std::int64_t u = 0; u <= t; ++u) sum += std::exp(weights[u] - most);
  for (std::int64_t u = 0; u <= t; ++u) weights[u] = std::exp(weights[u] - most) / sum;
  std::fill(out_row, out_row + HS, 0.0);
  for (std::int64_t u = 0; u <= t; ++u) {
    const float* v = qkv.data() + (b * T + u) * 3 * C + 2 * C + h * HS;
    for (std::int64_t d = 0; d < HS; ++d) out_row[d] += weights[u] * double(v[d]);
  }
  return most + std::log(sum);
}

HostProblem make_problem(const Shape& s, std::uint32_t seed, Precision precision, int threads) {
  check(s, precision);
  HostProblem p;
  p.shape = s;
  p.precision = precision;
  const std::size_t B = std::size_t(s.B), T = std::size_t(s.T), C = std::size_t(s.C),
                    NH = std::size_t(s.NH), HS = std::size_t(s.HS());
  p.qkv.resize(B * T * 3 * C);
  p.dout.resize(B * T * C);
  p.dqkv.resize(B * T * 3 * C);
  p.att.resize(B * NH * T * T);
  p.out.resize(B * T * C);
  p.lse.resize(B * NH * T);
  std::vector<float> masked(p.att.size());
  // A different stream per array, so no two arrays hold the same values.
  std::vector<float>* arrays[] = {&p.qkv, &p.dout, &p.dqkv, &masked};
  for (std::uint32_t i = 0; i < 4; ++i) fill_random(*arrays[i], seed * 16 + i);
  for (std::size_t row = 0; row < B * T; ++row)
    for (std::size_t c = 0; c < C; ++c) p.qkv[row * 3 * C + c] *= 4.0f;  // q
  const bool bf16 = precision == Precision::bf16;
  if (bf16) {
    for (std::vector<float>* v : {&p.qkv, &p.dout, &p.dqkv, &masked}) round_to_bf16(*v);
  }
  // The forward's att from the (rounded) q and k: each row's softmax over
  // its causal part in double, then rounded; out and lse from the unrounded
  // probabilities (forward_row). Rows (b, h, t) on `threads` threads: each
  // row's values are the same operations in the same order whatever the split.
  parallel_ranges(std::int64_t(B * NH * T), threads, [&](std::int64_t first, std::int64_t last) {
    std::vector<double> weights(T), out_row(HS);
    for (std::size_t r = std::size_t(first); r < std::size_t(last); ++r) {
      const std::size_t t = r % T, h = r / T % NH, b = r / T / NH;
      const double lse = forward_row(s, p.qkv, std::int64_t(b), std::int64_t(h), std::int64_t(t),
                                     weights.data(), out_row.data());
      const std::size_t row = ((b * NH + h) * T + t) * T;
      for (std::size_t u = 0; u < T; ++u) {
        const float a = u <= t ? float(weights[u]) : masked[row + u];
        p.att[row + u] = bf16 ? round_to_bf16(a) : a;
      }
      for (std::size_t d = 0; d < HS; ++d) {
        const float o = float(out_row[d]);
        p.out[(b * T + t) * C + h * HS + d] = bf16 ? round_to_bf16(o) : o;
      }
      p.lse[(b * NH + h) * T + t] = float(lse);
    }
  });
  return p;
}

HostProblem with_masked_nan(HostProblem p) {
  const std::size_t T = std::size_t(p.shape.T);
  for (std::size_t i = 0; i < p.att.size(); ++i)
    if (i % T > i / T % T) p.att[i] = std::numeric_limits<float>::quiet_NaN();
  return p;
}

}  // namespace llmk::reference::attention
