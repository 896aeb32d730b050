#include "reference_layers.hpp"

#include <cmath>
#include <vector>

namespace gpt2::ref {

void matmul(double* out, const double* inp, const double* w, const double* b, index_t M, index_t K,
            index_t OC) {
  for (index_t m = 0; m < M; ++m) {
    for (index_t o = 0; o < OC; ++o) {
      double s = b ? b[o] : 0.0;
      for (index_t k = 0; k < K; ++k) s += inp[m * K + k] * w[o * K + k];
      out[m * OC + o] = s;
    }
  }
}

void matmul_backward(double* dinp, double* dw, double* db, const double* dout, const double* inp,
                     const double* w, index_t M, index_t K, index_t OC) {
  for (index_t m = 0; m < M; ++m) {
    for (index_t o = 0; o < OC; ++o) {
      const double g = dout[m * OC + o];
      if (db) db[o] += g;
      for (index_t k = 0; k < K; ++k) {
        dinp[m * K + k] += g * w[o * K + k];
        dw[o * K + k] += g * inp[m * K + k];
      }
    }
  }
}

void layernorm(double* out, double* mean, double* rstd, const double* inp, const double* w,
               const double* b, index_t M, index_t C) {
  for (index_t m = 0; m < M; ++m) {
    const double* x = inp + m * C;
    double mu = 0.0;
    for (index_t c = 0; c < C; ++c) mu += x[c];
    mu /= double(C);
    double var = 0.0;
    for (index_t c = 0; c < C; ++c) var += (x[c] - mu) * (x[c] - mu);
    var /= double(C);
    const double r = 1.0 / std::sqrt(var + 1e-5);  // GPT-2's epsilon
    for (index_t c = 0; c < C; ++c) out[m * C + c] = (x[c] - mu) * r * w[c] + b[c];
    mean[m] = mu;
    rstd[m] = r;
  }
}

void layernorm_backward(double* dinp, double* dw, double* db, const double* dout,
                        const double* inp, const double* w, const double* mean, const double* rstd,
                        index_t M, index_t C) {
  for (index_t m = 0; m < M; ++m) {
    const double* x = inp + m * C;
    const double* g = dout + m * C;
    double dnorm_mean = 0.0, dnorm_norm_mean = 0.0;
    for (index_t c = 0; c < C; ++c) {
      const double norm = (x[c] - mean[m]) * rstd[m];
      dnorm_mean += g[c] * w[c];
      dnorm_norm_mean += g[c] * w[c] * norm;
      dw[c] += g[c] * norm;
      db[c] += g[c];
    }
    dnorm_mean /= double(C);
    dnorm_norm_mean /= double(C);
    for (index_t c = 0; c < C; ++c) {
      const double norm = (x[c] - mean[m]) * rstd[m];
      dinp[m * C + c] += rstd[m] * (g[c] * w[c] - dnorm_mean - norm * dnorm_norm_mean);
    }
  }
}

namespace {
const double kGeluScale = std::sqrt(2.0 / M_PI);
}

double gelu(double x) {
  return 0.5 * x * (1.0 + std::tanh(kGeluScale * (x + 0.044715 * x * x * x)));
}

double gelu_derivative(double x) {
  const double u = kGeluScale * (x + 0.044715 * x * x * x);
  const double th = std::tanh(u);
  const double du = kGeluScale * (1.0 + 3.0 * 0.044715 * x * x);
  return 0.5 * (1.0 + th) + 0.5 * x * (1.0 - th * th) * du;
}

void attention(double* out, double* att, double* lse, const double* qkv, index_t B, index_t T,
               index_t C, index_t NH) {
  const index_t HS = C / NH;
  const double alpha = 1.0 / std::sqrt(double(HS));
  for (index_t b = 0; b < B; ++b) {
    for (index_t h = 0; h < NH; ++h) {
      for (index_t t = 0; t < T; ++t) {
        const double* q = qkv + (b * T + t) * 3 * C + h * HS;
        double* a = att + ((b * NH + h) * T + t) * T;
        double top = -INFINITY;
        for (index_t u = 0; u <= t; ++u) {
          const double* k = qkv + (b * T + u) * 3 * C + C + h * HS;
          double s = 0.0;
          for (index_t i = 0; i < HS; ++i) s += q[i] * k[i];
          a[u] = alpha * s;
          top = std::max(top, a[u]);
        }
        double sum = 0.0;
        for (index_t u = 0; u <= t; ++u) sum += std::exp(a[u] - top);
        const double l = top + std::log(sum);
        lse[(b * NH + h) * T + t] = l;
        for (index_t u = 0; u < T; ++u) a[u] = u <= t ? std::exp(a[u] - l) : 0.0;
        double* o = out + (b * T + t) * C + h * HS;
        for (index_t i = 0; i < HS; ++i) {
          double s = 0.0;
          for (index_t u = 0; u <= t; ++u) s += a[u] * qkv[(b * T + u) * 3 * C + 2 * C + h * HS + i];
          o[i] = s;
        }
      }
    }
  }
}

void attention_backward(double* dqkv, const double* dout, const double* qkv, const double* att,
                        index_t B, index_t T, index_t C, index_t NH) {
  const index_t HS = C / NH;
  const double alpha = 1.0 / std::sqrt(double(HS));
  std::vector<double> datt(T), dpre(T);
  for (index_t b = 0; b < B; ++b) {
    for (index_t h = 0; h < NH; ++h) {
      for (index_t t = 0; t < T; ++t) {
        const double* a = att + ((b * NH + h) * T + t) * T;
        const double* g = dout + (b * T + t) * C + h * HS;
        const index_t row_t = (b * T + t) * 3 * C + h * HS;
        double dot = 0.0;
        for (index_t u = 0; u <= t; ++u) {
          const index_t row_u = (b * T + u) * 3 * C + h * HS;
          double s = 0.0;
          for (index_t i = 0; i < HS; ++i) {
            s += g[i] * qkv[row_u + 2 * C + i];
            dqkv[row_u + 2 * C + i] += a[u] * g[i];  // dv
          }
          datt[u] = s;
          dot += s * a[u];
        }
        for (index_t u = 0; u <= t; ++u) {
          dpre[u] = a[u] * (datt[u] - dot);
          const index_t row_u = (b * T + u) * 3 * C + h * HS;
          for (index_t i = 0; i < HS; ++i) {
            dqkv[row_t + i] += alpha * dpre[u] * qkv[row_u + C + i];      // dq
            dqkv[row_u + C + i] += alpha * dpre[u] * qkv[row_t + i];      // dk
          }
        }
      }
    }
  }
}

}  // namespace gpt2::ref
