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

}  // namespace

std::vector<double> reference_backward(const HostProblem& p, bool overwrite, Masking masking,
                                       int threads) {
  const Shape& s = p.shape;
  if (s.B < 0 || s.T < 0 || s.C < 0 || s.NH < 1 || s.C % s.NH != 0)
    throw std::invalid_argument("llmk::reference::attention: bad shape " + s.name);
  const i64 B = s.B, T = s.T, C = s.C, NH = s.NH, HS = s.HS();
  check_size("qkv", p.qkv, B * T * 3 * C);
  check_size("dqkv", p.dqkv, B * T * 3 * C);
  check_size("dout", p.dout, B * T * C);
  check_size("att", p.att, B * NH * T * T);
  std::vector<double> g(p.dqkv.size(), 0.0);
  if (!overwrite) g.assign(p.dqkv.begin(), p.dqkv.end());
  if (B * T * C == 0) return g;
  const bool dense = masking == Masking::Dense;
  const double alpha = 1.0 / std::sqrt(double(HS));
  const float* qkv = p.qkv.data();
  const float* dout = p.dout.data();
  const float* att_all = p.att.data();
  double* out = g.data();
  // Element (t, d) of q, k, v of head h in sequence b, of dout, of dq, dk, dv.
  const auto at = [=](i64 b, i64 t, i64 part, i64 h, i64 d) {
    return (b * T + t) * 3 * C + part * C + h * HS + d;
  };
  parallel_ranges(B * NH, threads, [&](i64 first, i64 last) {
    std::vector<double> att(std::size_t(T * T)), dpre(std::size_t(T * T));
    std::vector<double> dq(static_cast<std::size_t>(HS)), dk(dq), dv(dq);
    for (i64 bh = first; bh < last; ++bh) {
      const i64 b = bh / NH, h = bh % NH;
      // att with its masked part exactly 0 (not read), dpreatt likewise.
      for (i64 t = 0; t < T; ++t)
        for (i64 u = 0; u < T; ++u)
          att[t * T + u] = u <= t ? double(att_all[(bh * T + t) * T + u]) : 0.0;
      for (i64 t = 0; t < T; ++t) {
        double drow = 0.0;
        for (i64 u = 0; u <= t; ++u) {
          double datt = 0.0;
          for (i64 d = 0; d < HS; ++d)
            datt += double(dout[(b * T + t) * C + h * HS + d]) * double(qkv[at(b, u, 2, h, d)]);
          dpre[t * T + u] = datt;  // (datt for now)
          drow += att[t * T + u] * datt;
        }
        for (i64 u = 0; u < T; ++u)
          dpre[t * T + u] = u <= t ? att[t * T + u] * (dpre[t * T + u] - drow) : 0.0;
      }
      // Causal: u ≤ t in every sum; Dense: all of [0, T), the masked terms 0.
      // Each element's sum runs over u in increasing order (the loops over
      // d inside only make the rows contiguous).
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
  });
  return g;
}

}  // namespace llmk::reference::attention
