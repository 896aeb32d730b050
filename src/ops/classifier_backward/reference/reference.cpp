// llmk::classifier_backward's float64 reference and its problems
// (reference.hpp).
#include <ops/classifier_backward/reference/reference.hpp>

#include <core/reference/bf16.hpp>
#include <core/reference/parallel.hpp>
#include <core/reference/random.hpp>

#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace llmk::reference::classifier {

namespace {
void check_precision(Precision p) {
  if (p != Precision::fp32 && p != Precision::bf16)
    throw std::invalid_argument(std::string("classifier_backward has no precision ") +
                                precision_name(p) + " (fp32 and bf16 only)");
}
}  // namespace

double Shape::bytes(Precision p) const {
  check_precision(p);
  const double elem = p == Precision::bf16 ? 2 : 4;
  return 2 * double(M()) * double(Vp) * elem + 4.0 * double(M());
}

// Why each: one row and V = 1 (dlogits all 0 but the padding); V == Vp
// (no padding); Vp not a multiple of any pack (elements one at a time, rows
// unaligned); V one short of a pack boundary; several rows of GPT-2's
// padding at a small V; a row longer than a GPU team's lanes × packs × its
// unroll (16·32·4·8 = 16384 bf16), so each lane loops.
const std::vector<Shape>& test_shapes() {
  static const std::vector<Shape> shapes = {
      {"one", 1, 1, 1, 8},        {"unpadded", 2, 3, 64, 64},   {"odd", 3, 5, 61, 67},
      {"packs", 2, 7, 127, 136},  {"gpt2pad", 4, 16, 257, 304}, {"long", 2, 3, 20000, 20032},
  };
  return shapes;
}

Shape gpt2_shape() { return {"gpt2_124M", 8, 1024, 50257, 50304}; }

HostProblem make_problem(const Shape& s, std::uint32_t seed, Precision precision,
                         bool per_position) {
  check_precision(precision);
  HostProblem p;
  p.shape = s;
  p.precision = precision;
  const std::int64_t M = s.M();
  p.logits.resize(std::size_t(M * s.Vp));
  fill_random(p.logits, seed);
  for (std::int64_t m = 0; m < M; ++m) {
    for (std::int64_t c = 0; c < s.Vp; ++c) {
      float& x = p.logits[std::size_t(m * s.Vp + c)];
      x = c < s.V ? 4.0f * x : std::numeric_limits<float>::quiet_NaN();
      if (precision == Precision::bf16) x = round_to_bf16(x);
    }
  }
  std::vector<float> u(static_cast<std::size_t>(M));
  fill_random(u, seed + 1);
  p.targets.resize(std::size_t(M));
  for (std::int64_t m = 0; m < M; ++m) {
    const double f = (double(u[std::size_t(m)]) + 1) / 2;  // [0, 1)
    p.targets[std::size_t(m)] = std::int32_t(std::min<double>(double(s.V - 1), f * double(s.V)));
  }
  if (M > 0) p.targets[0] = std::int32_t(s.V - 1);
  p.dloss_value = M > 0 ? 1.0f / float(M) : 1.0f;
  if (per_position) {
    p.dloss.resize(std::size_t(M));
    fill_random(p.dloss, seed + 2);
    for (float& d : p.dloss) d = (1.0f + d / 2) / float(M);
  }
  return p;
}

Result64 reference_backward(const HostProblem& p) {
  const Shape& s = p.shape;
  const std::int64_t M = s.M(), V = s.V, Vp = s.Vp;
  Result64 r;
  r.dlogits.assign(std::size_t(M * Vp), 0.0);
  r.losses.assign(std::size_t(M), 0.0);
  parallel_ranges(M, 0, [&](std::int64_t m0, std::int64_t m1) {
    for (std::int64_t m = m0; m < m1; ++m) {
      const float* x = p.logits.data() + m * Vp;
      double max = -std::numeric_limits<double>::infinity();
      for (std::int64_t c = 0; c < V; ++c) max = std::max(max, double(x[c]));
      double sum = 0;
      for (std::int64_t c = 0; c < V; ++c) sum += std::exp(double(x[c]) - max);
      const std::int64_t t = p.targets[std::size_t(m)];
      const double scale = p.dloss.empty() ? p.dloss_value : p.dloss[std::size_t(m)];
      r.losses[std::size_t(m)] = std::log(sum) + max - double(x[t]);
      for (std::int64_t c = 0; c < V; ++c) {
        const double prob = std::exp(double(x[c]) - max) / sum;
        r.dlogits[std::size_t(m * Vp + c)] = (prob - (c == t ? 1.0 : 0.0)) * scale;
      }
    }
  });
  return r;
}

// dlogits, fp32: p_c = exp(x_c − max)/sum with float exp (CUDA's exp2f: 2
// ulp, plus the rounding of x·log2e − max·log2e, whose absolute error
// ≈ u·|x·log2e| ≤ 6e-8·12 for |x| ≤ 8 here: relative ≈ 5e-7 on exp) and a
// float sum of V terms, each lane's in order, then a tree (relative error
// ≈ u·√(terms a lane) ≪ 1e-6; the bound u·V = 3e-3 at V = 50257 is never
// approached by positive terms summed in blocks). rel = 1e-5 leaves 10× above
// that; abs = 2e-6 covers p_t − 1 where p_t ≈ 1 (cancellation: p's absolute
// error there ≈ 1e-6). bf16: the float result rounded once to 8 significant
// bits adds up to 2⁻⁹ ≈ 1.95e-3 relative: rel = 4e-3, abs 1e-5 (the fp32
// bound and then some). The abs of 4e-3 it had before (half a bf16 ulp of 1)
// hid every error of the columns whose probability is below ~4e-3: most of
// a row (a planted swap of neighbouring columns passed every test).
Tolerance dlogits_tolerance(Precision p) {
  check_precision(p);
  return p == Precision::fp32 ? Tolerance{1e-5, 2e-6} : Tolerance{4e-3, 1e-5};
}
// losses = log(sum) + max − x_t in float: each term's rounding (u·|term|,
// terms ≤ ~12 here) and sum's relative error (1e-6 → 1e-6 absolute on log):
// abs 1e-5 and rel 1e-5. The same in bf16 (losses are float; the logits are
// the bf16 values, exact in float).
Tolerance losses_tolerance(Precision p) {
  check_precision(p);
  return {1e-5, 1e-5};
}

std::string compare(const char* what, const std::vector<float>& out,
                    const std::vector<double>& ref, std::int64_t cols, Tolerance tol,
                    const std::vector<double>& scale_per_row) {
  if (out.size() != ref.size())
    return std::string(what) + ": " + std::to_string(out.size()) + " elements, expected " +
           std::to_string(ref.size());
  std::size_t bad = 0, worst = 0;
  double worst_ratio = -1;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const double o = out[i], r = ref[i];
    const double scale =
        scale_per_row.empty() ? 1.0 : std::abs(scale_per_row[std::size_t(i / std::size_t(cols))]);
    const double bound = tol.rel * std::abs(r) + tol.abs * scale;
    double ratio;
    if (std::isnan(r) || std::isnan(o))
      ratio = std::isnan(r) && std::isnan(o) ? 0 : std::numeric_limits<double>::infinity();
    else
      ratio = bound > 0 ? std::abs(o - r) / bound : (o == r ? 0 : std::numeric_limits<double>::infinity());
    if (!(ratio <= 1)) ++bad;
    if (!(ratio <= worst_ratio)) worst_ratio = ratio, worst = i;
  }
  if (bad == 0) return "";
  char line[320];
  std::snprintf(line, sizeof line,
                "%s: %zu of %zu elements outside the tolerance (rel %.1e, abs %.1e); the worst "
                "(%lld, %lld) is %.9g, expected %.9g",
                what, bad, out.size(), tol.rel, tol.abs, (long long)(cols ? worst / cols : worst),
                (long long)(cols ? worst % cols : 0), double(out[worst]), ref[worst]);
  return line;
}

}  // namespace llmk::reference::classifier
