#include <ops/layernorm_backward/reference/reference.hpp>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>

namespace llmk::reference::layernorm {
namespace {

using i64 = std::int64_t;

// f(first, last) over [0, n) on `threads` std::threads, each taking a
// contiguous range. Pure speed: every element is computed by the same
// operations in the same order whatever the split.
template <class F>
void parallel_ranges(i64 n, int threads, const F& f) {
  if (threads <= 0) threads = int(std::max(1u, std::thread::hardware_concurrency()));
  const i64 workers = std::min<i64>(threads, n);
  if (workers <= 1) {
    if (n > 0) f(i64(0), n);
    return;
  }
  std::vector<std::thread> pool;
  for (i64 w = 0; w < workers; ++w)
    pool.emplace_back([&f, n, w, workers] { f(n * w / workers, n * (w + 1) / workers); });
  for (std::thread& t : pool) t.join();
}

void check_size(const char* name, const std::vector<float>& v, i64 expected) {
  if (i64(v.size()) != expected)
    throw std::invalid_argument("llmk::reference::layernorm: " + std::string(name) + " has " +
                                std::to_string(v.size()) + " elements, expected " +
                                std::to_string(expected));
}

// An output's starting values: the initial gradients, or zeros when overwritten.
std::vector<double> start(const std::vector<float>& init, bool overwrite) {
  if (overwrite) return std::vector<double>(init.size(), 0.0);
  return std::vector<double>(init.begin(), init.end());
}

}  // namespace

Gradients64 reference_backward(const HostProblem& p, const Updates& updates, int threads) {
  const Shape& s = p.shape;
  if (s.B < 0 || s.T < 0 || s.C < 0)
    throw std::invalid_argument("llmk::reference::layernorm: negative size");
  const i64 M = s.M(), C = s.C;
  check_size("dout", p.dout, M * C);
  check_size("inp", p.inp, M * C);
  check_size("dinp", p.dinp, M * C);
  check_size("weight", p.weight, C);
  check_size("dweight", p.dweight, C);
  check_size("dbias", p.dbias, s.bias ? C : 0);
  check_size("mean", p.mean, M);
  check_size("rstd", p.rstd, M);

  Gradients64 g{start(p.dinp, updates.overwrite_dinp), start(p.dweight, updates.overwrite_dweight),
                start(p.dbias, updates.overwrite_dbias)};
  if (M == 0 || C == 0) return g;  // nothing to add (and no pointer arithmetic on empty arrays)
  const float* dout = p.dout.data();
  const float* inp = p.inp.data();
  const float* weight = p.weight.data();

  // dinp, row by row: the two row means, then the row.
  double* dinp = g.dinp.data();
  parallel_ranges(M, threads, [=, &p](i64 first, i64 last) {
    std::vector<double> norm(std::size_t(C), 0.0), dnorm(std::size_t(C), 0.0);
    for (i64 m = first; m < last; ++m) {
      const double mean = p.mean[std::size_t(m)], rstd = p.rstd[std::size_t(m)];
      double dnorm_sum = 0.0, dnorm_norm_sum = 0.0;
      for (i64 c = 0; c < C; ++c) {
        norm[c] = (double(inp[m * C + c]) - mean) * rstd;
        dnorm[c] = double(dout[m * C + c]) * double(weight[c]);
        dnorm_sum += dnorm[c];
        dnorm_norm_sum += dnorm[c] * norm[c];
      }
      const double dnorm_mean = dnorm_sum / double(C), dnorm_norm_mean = dnorm_norm_sum / double(C);
      for (i64 c = 0; c < C; ++c)
        dinp[m * C + c] += rstd * (dnorm[c] - dnorm_mean - norm[c] * dnorm_norm_mean);
    }
  });

  // dweight and dbias, column by column, each summed over the rows in order.
  double* dweight = g.dweight.data();
  double* dbias = s.bias ? g.dbias.data() : nullptr;
  parallel_ranges(C, threads, [=, &p](i64 first, i64 last) {
    for (i64 m = 0; m < M; ++m) {
      const double mean = p.mean[std::size_t(m)], rstd = p.rstd[std::size_t(m)];
      for (i64 c = first; c < last; ++c) {
        const double d = dout[m * C + c];
        dweight[c] += d * ((double(inp[m * C + c]) - mean) * rstd);
        if (dbias) dbias[c] += d;
      }
    }
  });
  return g;
}

}  // namespace llmk::reference::layernorm
