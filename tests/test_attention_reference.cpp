// llmk_attention_backward_reference, against checks that share nothing with
// it: its float64 backward against finite differences of a float64 forward
// written here (att recomputed from q and k); its problems (att the causal
// softmax, the masked part garbage, bf16 values); what the masked part and
// the thread count change (nothing); Causal against Dense (the same values
// for finite inputs, a NaN spread only where the masking says); and its
// tolerances (compare.hpp) against float32 and bf16 results simulated here,
// correct ones passing and planted bugs failing (AttentionToleranceIsTight,
// GPT-2's T = 1024 under `large`).
#include <ops/attention_backward/reference/compare.hpp>
#include <ops/attention_backward/reference/problem.hpp>
#include <ops/attention_backward/reference/reference.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace {

namespace ref = llmk::reference;
namespace at = llmk::reference::attention;
using at::HostProblem;
using at::Masking;
using at::Shape;
using ref::Precision;
using i64 = std::int64_t;

const std::vector<Precision> kPrecisions = {Precision::fp32, Precision::bf16};

std::string shape_name(const ::testing::TestParamInfo<Shape>& info) { return info.param.name; }

// Element (t, d) of part (0 q, 1 k, 2 v) of head h in sequence b of a
// (B·T) × 3C array.
i64 at_qkv(const Shape& s, i64 b, i64 t, i64 part, i64 h, i64 d) {
  return (b * s.T + t) * 3 * s.C + part * s.C + h * s.HS() + d;
}

// --- the reference against finite differences -----------------------------------

// The forward in double, written here from its definition: per (b, h)
// att = softmax over t' ≤ t of q[t]·k[t']/√HS, out[t] = Σ att[t, t']·v[t'];
// L = Σ dout ⊙ out, whose gradient in qkv is what the backward computes.
double loss(const Shape& s, const std::vector<double>& qkv, const std::vector<float>& dout) {
  const i64 HS = s.HS();
  const double scale = 1.0 / std::sqrt(double(HS));
  double L = 0.0;
  std::vector<double> p(std::size_t(s.T));
  for (i64 b = 0; b < s.B; ++b)
    for (i64 h = 0; h < s.NH; ++h)
      for (i64 t = 0; t < s.T; ++t) {
        double most = -std::numeric_limits<double>::infinity(), sum = 0.0;
        for (i64 u = 0; u <= t; ++u) {
          double dot = 0.0;
          for (i64 d = 0; d < HS; ++d)
            dot += qkv[at_qkv(s, b, t, 0, h, d)] * qkv[at_qkv(s, b, u, 1, h, d)];
          p[u] = dot * scale;
          most = std::max(most, p[u]);
        }
        for (i64 u = 0; u <= t; ++u) sum += (p[u] = std::exp(p[u] - most));
        for (i64 d = 0; d < HS; ++d) {
          double out = 0.0;
          for (i64 u = 0; u <= t; ++u) out += p[u] / sum * qkv[at_qkv(s, b, u, 2, h, d)];
          L += double(dout[std::size_t((b * s.T + t) * s.C + h * HS + d)]) * out;
        }
      }
  return L;
}

// The reference's dqkv against fourth-order central differences of loss()
// in every element of qkv (every `stride`-th for the larger shapes). The
// reference takes the problem's float att, the differences an exact one:
// they differ by att's rounding to float (≈ 6e-8 relative).
class AttentionReferenceGradient : public ::testing::TestWithParam<Shape> {};

TEST_P(AttentionReferenceGradient, MatchesFiniteDifferences) {
  const Shape s = GetParam();
  const HostProblem p = at::make_problem(s, 5, Precision::fp32);
  const std::vector<double> g = at::reference_backward(p, true);
  const i64 stride = s.T * s.C > 600 ? 7 : 1;
  std::vector<double> x(p.qkv.begin(), p.qkv.end());
  double err2 = 0.0, ref2 = 0.0;
  for (std::size_t i = 0; i < x.size(); i += std::size_t(stride)) {
    const double x0 = x[i], h = 1e-3 * std::max(1.0, std::abs(x0));
    const auto f = [&](double dx) {
      x[i] = x0 + dx;
      return loss(s, x, p.dout);
    };
    const double fd = (-f(2 * h) + 8 * f(h) - 8 * f(-h) + f(-2 * h)) / (12 * h);
    x[i] = x0;
    err2 += (fd - g[i]) * (fd - g[i]);
    ref2 += fd * fd;
  }
  const double rel = std::sqrt(err2 / std::max(ref2, 1e-300));
  std::printf("%s: relative L2 of the reference against finite differences %.2e\n",
              s.name.c_str(), rel);
  EXPECT_LT(rel, 1e-6);
}

const std::vector<Shape> kGradientShapes = {
    {"T1", 2, 1, 8, 2}, {"NH1", 2, 7, 5, 1}, {"odd", 3, 5, 6, 2}, {"HS13", 1, 37, 39, 3}};
INSTANTIATE_TEST_SUITE_P(Shapes, AttentionReferenceGradient, ::testing::ValuesIn(kGradientShapes),
                         shape_name);

// --- problems ------------------------------------------------------------------

class AttentionProblems : public ::testing::TestWithParam<Shape> {};

// att's rows: the causal part sums to 1 (up to its rounding), the masked
// part is garbage, not zeros; bf16 problems hold bf16 values.
TEST_P(AttentionProblems, AttIsTheCausalSoftmax) {
  const Shape s = GetParam();
  for (const Precision precision : kPrecisions) {
    SCOPED_TRACE(ref::precision_name(precision));
    const HostProblem p = at::make_problem(s, 9, precision);
    const double u = precision == Precision::bf16 ? 1.0 / 256 : 1.0 / (1 << 23);
    i64 masked_zero = 0, masked = 0;
    for (i64 r = 0; r < s.B * s.NH * s.T; ++r) {
      const i64 t = r % s.T;
      double sum = 0.0;
      for (i64 c = 0; c < s.T; ++c) {
        const float a = p.att[std::size_t(r * s.T + c)];
        if (c <= t) {
          EXPECT_GT(a, 0.0f);
          sum += a;
        } else {
          ++masked;
          masked_zero += a == 0.0f;
        }
      }
      ASSERT_NEAR(sum, 1.0, double(t + 1) * u) << "row " << r;
    }
    EXPECT_EQ(masked_zero, 0) << "of " << masked << " masked elements";
    if (precision == Precision::bf16)
      for (const std::vector<float>* v : {&p.qkv, &p.dout, &p.att, &p.dqkv})
        for (float x : *v) ASSERT_EQ(x, ref::round_to_bf16(x));
  }
}

// What may not change the reference: the masked part of att (NaN there), the
// thread count; and what it is made of: overwrite = accumulate − initial.
TEST_P(AttentionProblems, ReferenceReadsOnlyTheCausalPart) {
  const Shape s = GetParam();
  const HostProblem p = at::make_problem(s, 13, Precision::fp32);
  const std::vector<double> g = at::reference_backward(p, false);
  const std::vector<double> nan = at::reference_backward(at::with_masked_nan(p), false);
  ASSERT_EQ(g.size(), nan.size());
  EXPECT_EQ(std::memcmp(g.data(), nan.data(), g.size() * sizeof(double)), 0);
  for (const int threads : {1, 2, 3}) {
    const std::vector<double> t = at::reference_backward(p, false, Masking::Causal, threads);
    EXPECT_EQ(std::memcmp(g.data(), t.data(), g.size() * sizeof(double)), 0) << threads;
  }
  const std::vector<double> o = at::reference_backward(p, true);
  for (std::size_t i = 0; i < g.size(); ++i)
    ASSERT_NEAR(g[i], o[i] + double(p.dqkv[i]), 1e-12 * (1 + std::abs(g[i]))) << i;
}

// Finite inputs: Dense (the masked terms 0 added) gives the Causal values.
TEST_P(AttentionProblems, DenseEqualsCausalForFiniteInputs) {
  const Shape s = GetParam();
  const HostProblem p = at::make_problem(s, 21, Precision::fp32);
  EXPECT_EQ(at::reference_backward(p, true, Masking::Causal),
            at::reference_backward(p, true, Masking::Dense));
}

// The recompute variant's inputs: lse is each row's log-sum-exp (its
// probabilities exp(α q·k − lse) sum to 1 up to lse's float rounding), out
// is att·v of the same forward (up to out's and att's roundings).
TEST_P(AttentionProblems, OutAndLseAreTheForwards) {
  const Shape s = GetParam();
  const i64 HS = s.HS();
  const double alpha = 1.0 / std::sqrt(double(HS));
  for (const Precision precision : kPrecisions) {
    SCOPED_TRACE(ref::precision_name(precision));
    const HostProblem p = at::make_problem(s, 9, precision);
    const double u = precision == Precision::bf16 ? 1.0 / 256 : 1.0 / (1 << 23);
    for (i64 b = 0; b < s.B; ++b)
      for (i64 h = 0; h < s.NH; ++h)
        for (i64 t = 0; t < s.T; ++t) {
          const i64 r = (b * s.NH + h) * s.T + t;
          double sum = 0.0;
          for (i64 u2 = 0; u2 <= t; ++u2) {
            double dot = 0.0;
            for (i64 d = 0; d < HS; ++d)
              dot += double(p.qkv[std::size_t(at_qkv(s, b, t, 0, h, d))]) *
                     double(p.qkv[std::size_t(at_qkv(s, b, u2, 1, h, d))]);
            sum += std::exp(alpha * dot - double(p.lse[std::size_t(r)]));
          }
          // lse rounded to float: |lse|·2⁻²⁴ relative in every term.
          ASSERT_NEAR(sum, 1.0, 1e-6 * (1 + std::abs(p.lse[std::size_t(r)]))) << "row " << r;
          for (i64 d = 0; d < HS; ++d) {
            double o = 0.0;
            for (i64 u2 = 0; u2 <= t; ++u2)
              o += double(p.att[std::size_t(r * s.T + u2)]) *
                   double(p.qkv[std::size_t(at_qkv(s, b, u2, 2, h, d))]);
            // att's t + 1 roundings and out's own, of values ≤ 1 in size.
            ASSERT_NEAR(p.out[std::size_t((b * s.T + t) * s.C + h * HS + d)], o,
                        double(t + 2) * u) << "row " << r << ", channel " << d;
          }
        }
    if (precision == Precision::bf16)
      for (float x : p.out) ASSERT_EQ(x, ref::round_to_bf16(x));
  }
}

// The recompute reference (from out and lse) against the materialized one
// (from att) on the same problem: apart only by the roundings of att, out
// and lse. Measured (printed): fp32 1.5e-8 to 1.2e-7, bf16 1.7e-3 to 2.2e-3 (att and out
// rounded to bf16); required: a tenth of pair_tolerance in fp32, and in bf16
// recompute_vs_materialized_tolerance's share for the two references
// (2 × kBf16Tolerance).
TEST_P(AttentionProblems, RecomputeReferenceMatchesMaterialized) {
  const Shape s = GetParam();
  for (const Precision precision : kPrecisions) {
    SCOPED_TRACE(ref::precision_name(precision));
    const HostProblem p = at::make_problem(s, 23, precision);
    const std::vector<double> materialized = at::reference_backward(p, true);
    const std::vector<double> recomputed = at::reference_backward_recompute(p, true);
    ASSERT_EQ(recomputed.size(), materialized.size());
    double err2 = 0.0, ref2 = 0.0;
    for (std::size_t i = 0; i < recomputed.size(); ++i) {
      err2 += (recomputed[i] - materialized[i]) * (recomputed[i] - materialized[i]);
      ref2 += materialized[i] * materialized[i];
    }
    const double rel = std::sqrt(err2 / std::max(ref2, 1e-300));
    std::printf("%s %s: recompute reference vs materialized %.2e\n", s.name.c_str(),
                ref::precision_name(precision), rel);
    EXPECT_LE(rel, precision == Precision::bf16 ? 2 * ref::kBf16Tolerance
                                                : at::pair_tolerance(precision) / 10);
  }
}

INSTANTIATE_TEST_SUITE_P(TestShapes, AttentionProblems, ::testing::ValuesIn(at::test_shapes()),
                         shape_name);

// A NaN in k at key t' = 2, channel d of head h (k enters dq alone): Causal
// makes dq[t] NaN in that channel for t ≥ 2, Dense for every t.
TEST(AttentionReference, NanSpreadsAsTheMaskingSays) {
  const Shape s{"spread", 1, 6, 6, 2};
  HostProblem p = at::make_problem(s, 3, Precision::fp32);
  const i64 h = 1, d = 2, key = 2;
  p.qkv[std::size_t(at_qkv(s, 0, key, 1, h, d))] = std::numeric_limits<float>::quiet_NaN();
  const std::vector<double> causal = at::reference_backward(p, true, Masking::Causal);
  const std::vector<double> dense = at::reference_backward(p, true, Masking::Dense);
  for (i64 t = 0; t < s.T; ++t)
    for (i64 part = 0; part < 3; ++part)
      for (i64 hh = 0; hh < s.NH; ++hh)
        for (i64 dd = 0; dd < s.HS(); ++dd) {
          const std::size_t i = std::size_t(at_qkv(s, 0, t, part, hh, dd));
          const bool column = part == 0 && hh == h && dd == d;
          EXPECT_EQ(std::isnan(causal[i]), column && t >= key) << t << " " << part << " " << hh << " " << dd;
          EXPECT_EQ(std::isnan(dense[i]), column) << t << " " << part << " " << hh << " " << dd;
        }
}

// --- the tolerances: simulated results --------------------------------------------

// A bug planted in the simulation below.
enum class Plant { none, alpha_twice, diagonal_dropped, one_masked_key, no_drow, dk_untransposed };
const char* plant_name(Plant plant) {
  switch (plant) {
    case Plant::none: return "correct";
    case Plant::alpha_twice: return "alpha applied twice to dq, dk";
    case Plant::diagonal_dropped: return "the diagonal (t' = t) left out";
    case Plant::one_masked_key: return "one masked key (t' = t + 1) let in";
    case Plant::no_drow: return "dpreatt without drow";
    case Plant::dk_untransposed: return "dk from dpreatt's row, not its column";
  }
  return "?";
}

// An implementation simulated in float32, loops written here: per (b, h)
// datt, drow and dpreatt in float over the causal part (with the plant's
// range), then dq, dk, dv as float sums in order, α once (float 1/√HS);
// each element of dqkv is its float sum (+ its old value), rounded once to
// bf16 in a bf16 problem.
// The products' operands as tensor cores may see them: float (none), TF32
// (10 mantissa bits, to nearest) or bf16 (7 bits): what Math::tf32 must do,
// and what a silent switch to bf16 math would.
enum class Operands { float32, tf32, bf16 };
float seen_as(Operands o, float x) {
  if (o == Operands::bf16) return ref::round_to_bf16(x);
  if (o == Operands::float32 || !std::isfinite(x)) return x;
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  u += 0xFFFu + ((u >> 13) & 1u);  // to nearest, ties to even, at bit 13
  u &= ~0x1FFFu;
  std::memcpy(&x, &u, sizeof u);
  return x;
}

std::vector<float> simulate(const HostProblem& p, bool overwrite, Plant plant,
                            Operands operands = Operands::float32) {
  const auto r = [operands](float x) { return seen_as(operands, x); };
  const Shape& s = p.shape;
  const i64 T = s.T, HS = s.HS();
  const float alpha = float(1.0 / std::sqrt(double(HS)));
  std::vector<float> out(p.dqkv.size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = overwrite ? 0.0f : p.dqkv[i];
  std::vector<float> sums(out.size(), 0.0f), dpre(std::size_t(T * T)), att(std::size_t(T * T));
  // The causal keys of query t: u ≤ last(t).
  const auto last = [&](i64 t) {
    return plant == Plant::one_masked_key ? std::min(t + 1, T - 1) : t;
  };
  const auto in_range = [&](i64 t, i64 u) {
    return u <= last(t) && !(plant == Plant::diagonal_dropped && u == t);
  };
  for (i64 b = 0; b < s.B; ++b)
    for (i64 h = 0; h < s.NH; ++h) {
      for (i64 t = 0; t < T; ++t) {
        float drow = 0.0f;
        for (i64 u = 0; u < T; ++u) {
          att[std::size_t(t * T + u)] = p.att[std::size_t(((b * s.NH + h) * T + t) * T + u)];
          dpre[std::size_t(t * T + u)] = 0.0f;
          if (!in_range(t, u)) continue;
          float datt = 0.0f;
          for (i64 d = 0; d < HS; ++d)
            datt += r(p.dout[std::size_t((b * T + t) * s.C + h * HS + d)]) *
                    r(p.qkv[std::size_t(at_qkv(s, b, u, 2, h, d))]);
          dpre[std::size_t(t * T + u)] = datt;
          drow += att[std::size_t(t * T + u)] * datt;
        }
        if (plant == Plant::no_drow) drow = 0.0f;
        for (i64 u = 0; u < T; ++u)
          if (in_range(t, u))
            dpre[std::size_t(t * T + u)] = att[std::size_t(t * T + u)] * (dpre[std::size_t(t * T + u)] - drow);
      }
      const float a = plant == Plant::alpha_twice ? alpha * alpha : alpha;
      // Each element's sum in increasing u (the loops over d only make rows
      // contiguous).
      std::vector<float> dq(static_cast<std::size_t>(HS)), dk(dq), dv(dq);
      for (i64 t = 0; t < T; ++t) {
        std::fill(dq.begin(), dq.end(), 0.0f);
        std::fill(dk.begin(), dk.end(), 0.0f);
        std::fill(dv.begin(), dv.end(), 0.0f);
        for (i64 u = 0; u < T; ++u) {
          if (in_range(t, u)) {
            const float* k = p.qkv.data() + at_qkv(s, b, u, 1, h, 0);
            for (i64 d = 0; d < HS; ++d) dq[d] += r(dpre[std::size_t(t * T + u)]) * r(k[d]);
          }
          if (in_range(u, t)) {
            const float dp = plant == Plant::dk_untransposed ? dpre[std::size_t(t * T + u)]
                                                             : dpre[std::size_t(u * T + t)];
            const float* q = p.qkv.data() + at_qkv(s, b, u, 0, h, 0);
            const float* g = p.dout.data() + (b * T + u) * s.C + h * HS;
            for (i64 d = 0; d < HS; ++d) {
              dk[d] += r(dp) * r(q[d]);
              dv[d] += r(att[std::size_t(u * T + t)]) * r(g[d]);
            }
          }
        }
        for (i64 d = 0; d < HS; ++d) {
          sums[std::size_t(at_qkv(s, b, t, 0, h, d))] = a * dq[d];
          sums[std::size_t(at_qkv(s, b, t, 1, h, d))] = a * dk[d];
          sums[std::size_t(at_qkv(s, b, t, 2, h, d))] = dv[d];
        }
      }
    }
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] += sums[i];
    if (p.precision == Precision::bf16) out[i] = ref::round_to_bf16(out[i]);
  }
  return out;
}

// Simulated results against the reference, accumulated and overwritten (or
// only accumulated): correct ones within the tolerance, each planted bug
// outside it (but where the shape cannot show it, as said), the errors printed.
void check_tolerance(const Shape& s, const std::vector<bool>& updates = {false, true}) {
  for (const Precision precision : kPrecisions) {
    const HostProblem p = at::make_problem(s, 2024, precision);
    const double tol = at::tolerance(precision);
    for (const bool overwrite : updates) {
      const std::vector<double> g = at::reference_backward(p, overwrite);
      for (const Plant plant : {Plant::none, Plant::alpha_twice, Plant::diagonal_dropped,
                                Plant::one_masked_key, Plant::no_drow, Plant::dk_untransposed}) {
        // T = 1: dq = dk = 0 (α, dk's index do not matter) and no masked key exists.
        if (s.T == 1 && (plant == Plant::alpha_twice || plant == Plant::one_masked_key ||
                         plant == Plant::dk_untransposed))
          continue;
        const ref::Comparison c = ref::compare("dqkv", simulate(p, overwrite, plant), g, 3 * s.C, tol);
        std::printf("%-10s %-4s %-10s %-40s relative L2 %.2e (tolerance %.0e)\n", s.name.c_str(),
                    ref::precision_name(precision), overwrite ? "overwrite" : "accumulate",
                    plant_name(plant), c.rel_l2, tol);
        if (plant == Plant::none)
          EXPECT_TRUE(c.ok) << c.message;
        else
          EXPECT_FALSE(c.ok) << plant_name(plant) << " passed: " << c.message;
      }
    }
  }
}

class AttentionToleranceIsTight : public ::testing::TestWithParam<Shape> {};
TEST_P(AttentionToleranceIsTight, SimulatedResults) { check_tolerance(GetParam()); }
INSTANTIATE_TEST_SUITE_P(TestShapes, AttentionToleranceIsTight,
                         ::testing::ValuesIn(at::test_shapes()), shape_name);

// Math::tf32's tolerance separates what it names (issue 16, item 1): float
// arrays, each product's operands rounded as TF32 tensor cores read them
// pass kTf32Tolerance, accumulated and overwritten, and fail float32's;
// rounded to bf16 (a silent switch to bf16 math), overwritten, they fail
// kTf32Tolerance (accumulated, the initial values dilute the error below
// it: compare.hpp).
class AttentionTf32ToleranceSeparates : public ::testing::TestWithParam<Shape> {};
TEST_P(AttentionTf32ToleranceSeparates, SimulatedOperands) {
  const Shape& s = GetParam();
  const HostProblem p = at::make_problem(s, 2024, Precision::fp32);
  const double tol = at::tolerance(Precision::tf32);
  for (const bool overwrite : {false, true}) {
    const std::vector<double> g = at::reference_backward(p, overwrite);
    const ref::Comparison tf32 =
        ref::compare("dqkv", simulate(p, overwrite, Plant::none, Operands::tf32), g, 3 * s.C, tol);
    const ref::Comparison as_fp32 = ref::compare(
        "dqkv", simulate(p, overwrite, Plant::none, Operands::tf32), g, 3 * s.C,
        at::tolerance(Precision::fp32));
    const ref::Comparison bf16 =
        ref::compare("dqkv", simulate(p, overwrite, Plant::none, Operands::bf16), g, 3 * s.C, tol);
    std::printf("%-10s %-10s TF32 operands %.2e, bf16 operands %.2e (tolerance %.2e)\n",
                s.name.c_str(), overwrite ? "overwrite" : "accumulate", tf32.rel_l2, bf16.rel_l2, tol);
    EXPECT_TRUE(tf32.ok) << tf32.message;
    if (s.T > 1) {  // T = 1: dq = dk = 0, dv = dout exactly (one term): no product rounds
      EXPECT_FALSE(as_fp32.ok) << "TF32 operands pass float32's tolerance: " << as_fp32.message;
      if (overwrite) EXPECT_FALSE(bf16.ok) << "bf16 operands pass TF32's tolerance: " << bf16.message;
    }
  }
}
INSTANTIATE_TEST_SUITE_P(TestShapes, AttentionTf32ToleranceSeparates,
                         ::testing::ValuesIn(at::test_shapes()), shape_name);

// GPT-2's T = 1024 (one sequence; label `large`), accumulated only.
class AttentionLargeToleranceIsTight : public ::testing::TestWithParam<Shape> {};
TEST_P(AttentionLargeToleranceIsTight, SimulatedResults) { check_tolerance(GetParam(), {false}); }
INSTANTIATE_TEST_SUITE_P(Gpt2, AttentionLargeToleranceIsTight,
                         ::testing::Values(at::gpt2_shapes().front()), shape_name);

// --- the rest ----------------------------------------------------------------------

TEST(AttentionReference, EmptyShapesAndBadArguments) {
  for (const Shape& s : at::empty_shapes()) {
    const HostProblem p = at::make_problem(s, 1, Precision::fp32);
    EXPECT_EQ(at::reference_backward(p, true), std::vector<double>(p.dqkv.size(), 0.0)) << s.name;
    EXPECT_EQ(at::reference_backward(p, false),
              std::vector<double>(p.dqkv.begin(), p.dqkv.end()))
        << s.name;
  }
  EXPECT_THROW(at::make_problem({"bad", 1, 2, 5, 2}), std::invalid_argument);  // 5 % 2
  EXPECT_THROW(at::make_problem({"bad", 1, 2, 4, 0}), std::invalid_argument);
  EXPECT_THROW(at::make_problem({"x", 1, 2, 4, 2}, 1, Precision::bf16_fp32grad),
               std::invalid_argument);
  EXPECT_THROW(at::tolerance(Precision::bf16_fp32grad), std::invalid_argument);
  HostProblem p = at::make_problem({"x", 1, 2, 4, 2});
  p.att.pop_back();
  EXPECT_THROW(at::reference_backward(p), std::invalid_argument);
  EXPECT_NO_THROW(at::reference_backward_recompute(p));  // att is not read
  p.lse.pop_back();
  EXPECT_THROW(at::reference_backward_recompute(p), std::invalid_argument);
  for (const Shape& e : at::empty_shapes()) {
    const HostProblem q = at::make_problem(e, 1, Precision::fp32);
    EXPECT_EQ(at::reference_backward_recompute(q, true), std::vector<double>(q.dqkv.size(), 0.0))
        << e.name;
  }
}

}  // namespace
