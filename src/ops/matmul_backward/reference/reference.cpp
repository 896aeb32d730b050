#include <ops/matmul_backward/reference/reference.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <thread>

#if LLMK_REFERENCE_HAVE_BLAS
#include <cblas.h>
#include <climits>
#endif

namespace llmk::reference {
namespace {

using i64 = std::int64_t;

// Rows of the result that one work item computes together: each weight row
// (resp. inp row) read from memory serves kBlock rows, which keeps the seed
// shape's loops at seconds instead of a minute. Pure speed; the arithmetic is
// the seed's, each element summed in order of the summation index.
constexpr i64 kBlock = 8;

// f(first, last) over [0, n) in blocks of kBlock, on `threads` std::threads
// each taking a contiguous range of blocks.
template <class F>
void parallel_blocks(i64 n, int threads, const F& f) {
  const i64 blocks = (n + kBlock - 1) / kBlock;
  if (threads <= 0) threads = int(std::max(1u, std::thread::hardware_concurrency()));
  const i64 workers = std::min<i64>(threads, blocks);
  if (workers <= 1) {
    if (n > 0) f(0, n);
    return;
  }
  std::vector<std::thread> pool;
  for (i64 w = 0; w < workers; ++w) {
    const i64 b0 = blocks * w / workers, b1 = blocks * (w + 1) / workers;
    pool.emplace_back([&f, n, b0, b1] { f(b0 * kBlock, std::min(n, b1 * kBlock)); });
  }
  for (std::thread& t : pool) t.join();
}

// dinp[m, :] += Σ_o dout[m, o] · weight[o, :]
void loops_dinp(const float* dout, const float* weight, i64 M, i64 C, i64 OC, double* dinp,
                int threads) {
  parallel_blocks(M, threads, [=](i64 first, i64 last) {
    for (i64 m0 = first; m0 < last; m0 += kBlock) {
      const i64 m1 = std::min(last, m0 + kBlock);
      for (i64 o = 0; o < OC; ++o) {
        const float* w = weight + o * C;
        for (i64 m = m0; m < m1; ++m) {
          const double d = dout[m * OC + o];
          double* out = dinp + m * C;
          for (i64 c = 0; c < C; ++c) out[c] += d * double(w[c]);
        }
      }
    }
  });
}

// dweight[o, :] += Σ_m dout[m, o] · inp[m, :]; dbias[o] += Σ_m dout[m, o]
void loops_dweight_dbias(const float* dout, const float* inp, i64 M, i64 C, i64 OC,
                         double* dweight, double* dbias, int threads) {
  parallel_blocks(OC, threads, [=](i64 first, i64 last) {
    for (i64 o0 = first; o0 < last; o0 += kBlock) {
      const i64 o1 = std::min(last, o0 + kBlock);
      for (i64 m = 0; m < M; ++m) {
        const float* x = inp + m * C;
        for (i64 o = o0; o < o1; ++o) {
          const double d = dout[m * OC + o];
          if (dbias) dbias[o] += d;
          double* out = dweight + o * C;
          for (i64 c = 0; c < C; ++c) out[c] += d * double(x[c]);
        }
      }
    }
  });
}

#if LLMK_REFERENCE_HAVE_BLAS
void blas_backward(const float* dout_f, const float* inp_f, const float* weight_f, i64 M, i64 C,
                   i64 OC, double* dinp, double* dweight, double* dbias) {
  // cblas takes int sizes (and int leading dimensions).
  for (i64 n : {M, C, OC})
    if (n > INT_MAX)
      throw std::invalid_argument("llmk::reference: the Blas method takes sizes up to 2^31 - 1");
  const std::vector<double> dout(dout_f, dout_f + M * OC), inp(inp_f, inp_f + M * C),
      weight(weight_f, weight_f + OC * C);
  const int m = int(M), c = int(C), oc = int(OC);
  // dinp (M×C) += dout (M×OC) · weight (OC×C)
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, c, oc, 1.0, dout.data(), oc,
              weight.data(), c, 1.0, dinp, c);
  // dweight (OC×C) += doutᵀ (OC×M) · inp (M×C)
  cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, oc, c, m, 1.0, dout.data(), oc, inp.data(),
              c, 1.0, dweight, c);
  if (dbias) {
    for (i64 r = 0; r < M; ++r) {
      const double* row = dout.data() + r * OC;
      for (i64 o = 0; o < OC; ++o) dbias[o] += row[o];
    }
  }
}
#endif

Method resolve(Method method, i64 M, i64 C, i64 OC) {
  if (method != Method::Auto) return method;
  const double madds = double(M) * double(C) * double(OC);
  return have_blas() && madds >= double(1 << 24) ? Method::Blas : Method::Loops;
}

}  // namespace

bool have_blas() { return LLMK_REFERENCE_HAVE_BLAS; }

const char* method_name(Method method, const Shape& s) {
  return resolve(method, s.M(), s.C, s.OC) == Method::Blas ? "OpenBLAS dgemm" : "loops";
}

void accumulate_backward(const float* dout, const float* inp, const float* weight, i64 M, i64 C,
                         i64 OC, double* dinp, double* dweight, double* dbias, Method method,
                         int threads) {
  if (M < 0 || C < 0 || OC < 0) throw std::invalid_argument("llmk::reference: negative size");
  // Nothing to add without rows or without output channels; with C = 0 only
  // dbias has elements. (No pointer arithmetic on empty arrays: their
  // pointers may be null.)
  if (M == 0 || OC == 0) return;
  method = resolve(method, M, C, OC);
  if (method == Method::Blas) {
#if LLMK_REFERENCE_HAVE_BLAS
    if (C > 0) return blas_backward(dout, inp, weight, M, C, OC, dinp, dweight, dbias);
#else
    throw std::logic_error("llmk::reference: built without OpenBLAS, no Blas method");
#endif
  }
  if (C > 0) loops_dinp(dout, weight, M, C, OC, dinp, threads);
  loops_dweight_dbias(dout, inp, M, C, OC, dweight, dbias, threads);
}

double gelu_grad(double x) {
  const double s = std::sqrt(2.0 / 3.14159265358979323846), a = 0.044715;
  const double t = std::tanh(s * (x + a * x * x * x));
  return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * s * (1.0 + 3.0 * a * x * x);
}

Gradients64 reference_backward(const HostProblem& p, Method method, int threads,
                               const Updates& updates) {
  const Shape& s = p.shape;
  const std::size_t MC = std::size_t(s.M() * s.C);
  if (p.gelu && p.pre_gelu.size() != MC)
    throw std::invalid_argument("llmk::reference: pre_gelu must have M*C elements");
  Gradients64 g;
  // Start from the initial gradients, or from 0 for an overwritten output;
  // with GELU the product is summed alone, then multiplied by gelu'.
  const auto start = [](std::vector<double>& out, const std::vector<float>& init, bool zero) {
    if (zero)
      out.assign(init.size(), 0.0);
    else
      out.assign(init.begin(), init.end());
  };
  start(g.dinp, p.dinp, updates.overwrite_dinp || p.gelu);
  start(g.dweight, p.dweight, updates.overwrite_dweight);
  start(g.dbias, p.dbias, updates.overwrite_dbias);
  accumulate_backward(p.dout.data(), p.inp.data(), p.weight.data(), s.M(), s.C, s.OC,
                      g.dinp.data(), g.dweight.data(), s.bias ? g.dbias.data() : nullptr, method,
                      threads);
  if (p.gelu) {
    for (std::size_t i = 0; i < MC; ++i) {
      const double product = g.dinp[i] * gelu_grad(double(p.pre_gelu[i]));
      g.dinp[i] = updates.overwrite_dinp ? product : double(p.dinp[i]) + product;
    }
  }
  return g;
}

}  // namespace llmk::reference
