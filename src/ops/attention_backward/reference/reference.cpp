#include <ops/attention_backward/reference/reference.hpp>

#include <core/reference/parallel.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace llmk::reference::attention {
namespace {

using i64 = std::int64_t;

void check_size(const char* name, const std::vector<float>& v, i64 expected) {
  if (i64(v.size()) != expected)
    throw std::invalid_argument("llmk::reference::attention: " + std::string(name) + " has " +
                                std::to_string(v.size()) + " elements, expected " +
                                std::to_string(expected));
}

// What both references share: the sizes, the arrays, and one head's
// gradients from its probabilities.
struct Heads {
  i64 B, T, C, NH, HS;
  double alpha;
  const float* qkv;
  const float* dout;

  // Element (t, d) of q, k, v (part 0, 1, 2) of head h in sequence b, of dq, dk, dv.
  i64 at(i64 b, i64 t, i64 part, i64 h, i64 d) const {
    return (b * T + t) * 3 * C + part * C + h * HS + d;
  }

  // dq, dk, dv of head h of sequence b added to `out`, from att (T × T, its
  // masked part exactly 0) and, where `given_drow` is not null, the rows'
  // drow (else Σ att ⊙ datt over the causal part). dpre is T × T scratch.
  void backward(i64 b, i64 h, const std::vector<double>& att, const double* given_drow,
                bool dense, std::vector<double>& dpre, double* out) const {
    for (i64 t = 0; t < T; ++t) {
      double drow = 0.0;
      for (i64 u = 0; u <= t; ++u) {
        double datt = 0.0;
        for (i64 d = 0; d < HS; ++d)
          datt += double(dout[(b * T + t) * C + h * HS + d]) * double(qkv[at(b, u, 2, h, d)]);
        dpre[t * T + u] = datt;  // (datt for now)
        drow += att[t * T + u] * datt;
      }
      if (given_drow) drow = given_drow[t];
      for (i64 u = 0; u < T; ++u)
        dpre[t * T + u] = u <= t ? att[t * T + u] * (dpre[t * T + u] - drow) : 0.0;
    }
    // Causal: u ≤ t in every sum; Dense: all of [0, T), the masked terms 0.
    // Each element's sum runs over u in increasing order (the loops over
    // d inside only make the rows contiguous).
    std::vector<double> dq(static_cast<std::size_t>(HS)), dk(dq), dv(dq);
    for (i64 t = 0; t < T; ++t) {
      std::fill(dq.begin(), dq.end(), 0.0);
      std::fill(dk.begin(), dk.end(), 0.0);
      std::fill(dv.begin(), dv.end(), 0.0);
      for (i64 u = 0; u < T; ++u) {
        if (dense || u <= t) {
          const float* k = qkv + at(b, u, 1, h, 0);
          for (i64 d = 0; d < HS; ++d) dq[d] += dpre[t * T + u] * double(k[d]);
        }
        if (dense || u >= t) {
          const float* q = qkv + at(b, u, 0, h, 0);
          const float* g_u = dout + (b * T + u) * C + h * HS;
          for (i64 d = 0; d < HS; ++d) {
            dk[d] += dpre[u * T + t] * double(q[d]);
            dv[d] += att[u * T + t] * double(g_u[d]);
          }
        }
      }
      for (i64 d = 0; d < HS; ++d) {
        out[at(b, t, 0, h, d)] += alpha * dq[d];
        out[at(b, t, 1, h, d)] += alpha * dk[d];
        out[at(b, t, 2, h, d)] += dv[d];
      }
    }
  }
};

void check_shape(const Shape& s) {
  if (s.B < 0 || s.T < 0 || s.C < 0 || s.NH < 1 || s.C % s.NH != 0)
    throw std::invalid_argument("llmk::reference::attention: bad shape " + s.name);
}

Heads heads_of(const HostProblem& p) {
  const Shape& s = p.shape;
  return {s.B, s.T, s.C, s.NH, s.HS(), 1.0 / std::sqrt(double(s.HS())), p.qkv.data(),
          p.dout.data()};
}

}  // namespace

std::vector<double> reference_backward(const HostProblem& p, bool overwrite, Masking masking,
                                       int threads) {
  const Shape& s = p.shape;
  check_shape(s);
  const i64 B = s.B, T = s.T, C = s.C, NH = s.NH;
  check_size("qkv", p.qkv, B * T * 3 * C);
  check_size("dqkv", p.dqkv, B * T * 3 * C);
  check_size("dout", p.dout, B * T * C);
  check_size("att", p.att, B * NH * T * T);
  std::vector<double> g(p.dqkv.size(), 0.0);
  if (!overwrite) g.assign(p.dqkv.begin(), p.dqkv.end());
  if (B * T * C == 0) return g;
  const Heads heads = heads_of(p);
  const float* att_all = p.att.data();
  parallel_ranges(B * NH, threads, [&](i64 first, i64 last) {
    std::vector<double> att(std::size_t(T * T)), dpre(std::size_t(T * T));
    for (i64 bh = first; bh < last; ++bh) {
      // att with its masked part exactly 0 (not read).
      for (i64 t = 0; t < T; ++t)
        for (i64 u = 0; u < T; ++u)
          att[t * T + u] = u <= t ? double(att_all[(bh * T + t) * T + u]) : 0.0;
      heads.backward(bh / NH, bh % NH, att, nullptr, masking == Masking::Dense, dpre, g.data());
    }
  });
  return g;
}

std::vector<double> reference_backward_recompute(const HostProblem& p, bool overwrite,
                                                 int threads) {
  const Shape& s = p.shape;
  check_shape(s);
  const i64 B = s.B, T = s.T, C = s.C, NH = s.NH, HS = s.HS();
  check_size("qkv", p.qkv, B * T * 3 * C);
  check_size("dqkv", p.dqkv, B * T * 3 * C);
  check_size("dout", p.dout, B * T * C);
  check_size("out", p.out, B * T * C);
  check_size("lse", p.lse, B * NH * T);
  std::vector<double> g(p.dqkv.size(), 0.0);
  if (!overwrite) g.assign(p.dqkv.begin(), p.dqkv.end());
  if (B * T * C == 0) return g;
  const Heads heads = heads_of(p);
  parallel_ranges(B * NH, threads, [&](i64 first, i64 last) {
    std::vector<double> att(std::size_t(T * T)), dpre(std::size_t(T * T));
    std::vector<double> drow(static_cast<std::size_t>(T));
    for (i64 bh = first; bh < last; ++bh) {
      const i64 b = bh / NH, h = bh % NH;
      // P = exp(α q·k − lse) over the causal part, drow = D = dout_h · out_h.
      for (i64 t = 0; t < T; ++t) {
        const double lse = double(p.lse[std::size_t(bh * T + t)]);
        for (i64 u = 0; u < T; ++u) {
          double dot = 0.0;
          for (i64 d = 0; d < HS && u <= t; ++d)
            dot += double(p.qkv[heads.at(b, t, 0, h, d)]) * double(p.qkv[heads.at(b, u, 1, h, d)]);
          att[t * T + u] = u <= t ? std::exp(heads.alpha * dot - lse) : 0.0;
        }
        double D = 0.0;
        for (i64 d = 0; d < HS; ++d) {
          const std::size_t i = std::size_t((b * T + t) * C + h * HS + d);
          D += double(p.dout[i]) * double(p.out[i]);
        }
        drow[std::size_t(t)] = D;
      }
      heads.backward(b, h, att, drow.data(), false, dpre, g.data());
    }
  });
  return g;
}

std::vector<std::vector<double>> reference_forward(const HostProblem& p, bool overwrite,
                                                   int threads) {
  const Shape& s = p.shape;
  const i64 B = s.B, T = s.T, C = s.C, NH = s.NH, HS = s.HS();
  check_size("qkv", p.qkv, B * T * 3 * C);
  check_size("out", p.out, B * T * C);
  std::vector<double> out(std::size_t(B * T * C)), lse(std::size_t(B * NH * T));
  parallel_ranges(B * NH * T, threads, [&](i64 first, i64 last) {
    std::vector<double> weights(static_cast<std::size_t>(T)), row(static_cast<std::size_t>(HS));
    for (i64 r = first; r < last; ++r) {
      const i64 t = r % T, h = r / T % NH, b = r / T / NH;
      lse[std::size_t(r)] = forward_row(s, p.qkv, b, h, t, weights.data(), row.data());
      for (i64 d = 0; d < HS; ++d) {
        const std::size_t at = std::size_t((b * T + t) * C + h * HS + d);
        out[at] = row[std::size_t(d)] + (overwrite ? 0.0 : double(p.out[at]));
      }
    }
  });
  return {out, lse};
}

}  // namespace llmk::reference::attention
