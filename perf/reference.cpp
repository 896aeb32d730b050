#include "reference.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>

namespace llmk::perf {
namespace {

std::vector<double> to_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

double relative_l2(const std::vector<double>& ref, const float* out) {
  double diff = 0.0, norm = 0.0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double d = double(out[i]) - ref[i];
    diff += d * d;
    norm += ref[i] * ref[i];
  }
  if (norm == 0.0) return std::sqrt(diff);  // empty or all-zero reference: absolute error
  return std::sqrt(diff / norm);
}

}  // namespace

Reference compute_reference(const HostInputs& in) {
  const Shape& s = in.shape;  // every extent >= 1 and fits an int (checked by main)
  const int M = int(s.M()), C = int(s.C), OC = int(s.OC);
  const std::vector<double> dout = to_double(in.dout);
  const std::vector<double> inp = to_double(in.inp);
  const std::vector<double> weight = to_double(in.weight);
  Reference ref{to_double(in.dinp0), to_double(in.dweight0), to_double(in.dbias0)};
  // dinp (M×C) += dout (M×OC) · weight (OC×C)
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, C, OC, 1.0, dout.data(), OC,
              weight.data(), C, 1.0, ref.dinp.data(), C);
  // dweight (OC×C) += doutᵀ (OC×M) · inp (M×C)
  cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, OC, C, M, 1.0, dout.data(), OC,
              inp.data(), C, 1.0, ref.dweight.data(), C);
  // dbias (OC) += Σ_m dout[m, :]
  for (int m = 0; m < M; ++m) {
    const double* row = dout.data() + std::size_t(m) * OC;
    for (int o = 0; o < OC; ++o) ref.dbias[o] += row[o];
  }
  return ref;
}

double Errors::max() const { return std::max({dinp, dweight, dbias}); }

Errors compare(const Reference& ref, const float* dinp, const float* dweight, const float* dbias) {
  return {relative_l2(ref.dinp, dinp), relative_l2(ref.dweight, dweight),
          relative_l2(ref.dbias, dbias)};
}

}  // namespace llmk::perf
