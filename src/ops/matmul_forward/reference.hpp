// The float64 reference of llmk::matmul_forward, its host problems and
// tolerances, shared by the tests and the perf driver (plain C++17, header
// only). Shapes are the matmul backward's (ops/matmul_backward/reference/
// problem.hpp: B×T×C into OC, with or without a bias), with or without GELU.
#pragma once

#include <core/reference/bf16.hpp>
#include <core/reference/compare.hpp>
#include <core/reference/precision.hpp>
#include <core/reference/random.hpp>
#include <ops/gelu_forward/reference.hpp>
#include <ops/matmul_backward/reference/problem.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace llmk::reference::matmul_forward {

struct HostProblem {
  Shape shape;
  Precision precision = Precision::fp32;
  bool gelu = false;
  std::vector<float> inp, weight, bias;  // M×C, OC×C, OC (empty without one)
  std::vector<float> out, pre_gelu;      // initial values: M×OC (pre_gelu empty without GELU)
};

// 2·M·C·OC flops; bytes: inp, weight, bias read, out written (and read when
// accumulated), pre_gelu written.
inline double flops(const Shape& s) { return 2.0 * double(s.M()) * double(s.C) * double(s.OC); }
inline double bytes(const Shape& s, Precision p, bool gelu, bool overwrite_out) {
  const double e = p == Precision::bf16 ? 2.0 : 4.0, M = double(s.M());
  const double outs = (overwrite_out ? 1.0 : 2.0) + (gelu ? 1.0 : 0.0);
  return e * (M * double(s.C) + double(s.OC) * double(s.C) + (s.bias ? double(s.OC) : 0.0) +
              outs * M * double(s.OC));
}

// inp uniform in [-1, 1); weight uniform in ±4/√C·[-1, 1) and bias in
// [-1, 1), so that the sums (standard deviation ≈ 4/3) cover GELU's curve
// and both its tails at every C; out and pre_gelu's initial values random
// (an element left unwritten keeps its value). bf16: every array's values
// rounded to bf16.
inline HostProblem make_problem(const Shape& s, bool gelu, std::uint32_t seed, Precision p) {
  if (p != Precision::fp32 && p != Precision::bf16)
    throw std::invalid_argument(std::string("llmk::reference::matmul_forward: ") +
                                precision_name(p) + " is not a precision of matmul_forward");
  const std::size_t M = std::size_t(s.M()), C = std::size_t(s.C), OC = std::size_t(s.OC);
  HostProblem h{s, p, gelu, {}, {}, {}, {}, {}};
  h.inp.resize(M * C);
  h.weight.resize(OC * C);
  h.bias.resize(s.bias ? OC : 0);
  h.out.resize(M * OC);
  h.pre_gelu.resize(gelu ? M * OC : 0);
  fill_random(h.inp, seed * 16 + 1);
  fill_random(h.weight, seed * 16 + 2);
  fill_random(h.bias, seed * 16 + 3);
  fill_random(h.out, seed * 16 + 4);
  fill_random(h.pre_gelu, seed * 16 + 5);
  const float scale = 4.0f / std::sqrt(float(std::max<std::size_t>(C, 1)));
  for (float& w : h.weight) w *= scale;
  if (p == Precision::bf16)
    for (std::vector<float>* v : {&h.inp, &h.weight, &h.bias, &h.out, &h.pre_gelu})
      round_to_bf16(*v);
  return h;
}

// out and pre_gelu in double: pre = inp·weightᵀ + bias; out = the initial out
// (unless overwritten) + pre, or gelu(pre) with GELU. pre_gelu is written
// whatever the update (empty without GELU). Rows split over `threads`
// threads (llmk-perf's GPT-2 sizes: 19 GFLOP in double).
inline std::vector<std::vector<double>> reference_forward(const HostProblem& p, bool overwrite_out,
                                                          int threads = 1) {
  const std::size_t M = std::size_t(p.shape.M()), C = std::size_t(p.shape.C),
                    OC = std::size_t(p.shape.OC);
  if (p.inp.size() != M * C || p.weight.size() != OC * C || p.out.size() != M * OC ||
      p.bias.size() != (p.shape.bias ? OC : 0) || p.pre_gelu.size() != (p.gelu ? M * OC : 0))
    throw std::invalid_argument("llmk::reference::matmul_forward: arrays of the wrong size");
  std::vector<double> out(M * OC), pre(p.gelu ? M * OC : 0);
  const auto rows = [&](std::size_t m0, std::size_t m1) {
    for (std::size_t m = m0; m < m1; ++m)
      for (std::size_t o = 0; o < OC; ++o) {
        double sum = p.shape.bias ? double(p.bias[o]) : 0.0;
        for (std::size_t c = 0; c < C; ++c)
          sum += double(p.inp[m * C + c]) * double(p.weight[o * C + c]);
        const std::size_t i = m * OC + o;
        if (p.gelu) pre[i] = sum;
        out[i] =
            (overwrite_out ? 0.0 : double(p.out[i])) + (p.gelu ? gelu_forward::gelu(sum) : sum);
      }
  };
  const std::size_t n = std::size_t(std::max(1, threads)), per = (M + n - 1) / n;
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < n && t * per < M; ++t)
    pool.emplace_back(rows, t * per, std::min(M, (t + 1) * per));
  rows(0, std::min(M, per));
  for (std::thread& t : pool) t.join();
  return {out, pre};
}

// Relative L2 of out (k = 0) and pre_gelu (1). fp32 kFloat32Tolerance
// (5e-5): sums of C float products of random sign, relative error ~√C·u
// (3e-6 at C = 3072), and gelu's few ulps. bf16 kBf16Tolerance (4e-3): one
// rounding of each output (2⁻⁹/√3 ≈ 1.1e-3 relative L2), out from a
// pre_gelu rounded first where an implementation does (rounds_once false:
// ≈ 1.6e-3). What they catch: a bias left out moves out by ~0.5 of its rms;
// a GELU of the unbiased sum by more; 0.04 for 0.044715 in gelu by ~1e-3
// (fp32 fails).
inline double tolerance(Precision p, std::size_t) {
  return p == Precision::bf16 ? kBf16Tolerance : kFloat32Tolerance;
}

}  // namespace llmk::reference::matmul_forward
