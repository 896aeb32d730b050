#include <ops/matmul_backward/reference/compare.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace llmk::reference {

double tolerance(Precision precision, Output output) {
  if (precision == Precision::tf32) return kTf32Tolerance;
  return bf16_output(precision, output) ? kBf16Tolerance : kFloat32Tolerance;
}

double pair_tolerance(Precision precision, Output output) {
  return 2 * tolerance(precision, output);
}

Gradients64 float32_error_bounds(const HostProblem& p, const Gradients64& ref,
                                 const Updates& updates) {
  // Σ t_k² of every element: the reference of the squared inputs, overwritten.
  HostProblem squares = p;
  squares.precision = Precision::fp32;
  squares.gelu = false;
  squares.pre_gelu.clear();
  for (std::vector<float>* v : {&squares.dout, &squares.inp, &squares.weight})
    for (float& x : *v) x = x * x;
  const Gradients64 s2 = reference_backward(squares, Method::Auto, 0, {true, true, true});

  constexpr double u = 0x1p-24, sigmas = 10;
  const Shape& s = p.shape;
  const auto bounds = [&](const std::vector<double>& sum_sq, const std::vector<double>& r,
                          const std::vector<float>& init, bool overwritten, std::int64_t K,
                          bool gelu) {
    std::vector<double> b(r.size());
    for (std::size_t i = 0; i < r.size(); ++i) {
      if (!std::isfinite(r[i]) || !std::isfinite(sum_sq[i])) {
        b[i] = std::numeric_limits<double>::quiet_NaN();
        continue;
      }
      const double norm = std::sqrt(sum_sq[i]), start = overwritten ? 0.0 : double(init[i]);
      const double g = gelu ? gelu_grad(double(p.pre_gelu[i])) : 1.0;
      double e = sigmas * u * std::sqrt(double(K) / 6) * norm * std::abs(g) +
                 2 * u * (std::abs(r[i]) + std::abs(start));
      if (gelu) {
        // The sum before gelu': from the reference where the factor is not
        // small, else its Cauchy-Schwarz bound √K·‖t‖₂.
        const double sum = std::abs(g) >= 1.0 / 64 ? std::abs(r[i] - start) / std::abs(g)
                                                   : std::sqrt(double(K)) * norm;
        e += 2e-6 * sum;
      }
      b[i] = e;
    }
    return b;
  };
  Gradients64 b;
  b.dinp = bounds(s2.dinp, ref.dinp, p.dinp, updates.overwrite_dinp, s.OC, p.gelu);
  b.dweight = bounds(s2.dweight, ref.dweight, p.dweight, updates.overwrite_dweight, s.M(), false);
  b.dbias = bounds(s2.dbias, ref.dbias, p.dbias, updates.overwrite_dbias, s.M(), false);
  return b;
}

}  // namespace llmk::reference
