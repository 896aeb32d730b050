// llmk_layernorm_backward_reference, against checks that share nothing with
// it: its float64 backward against finite differences of a float64 forward
// written here (mean and rstd recomputed from inp); its problems' mean and
// rstd against the forward's statistics in long double; its bf16 problems'
// values; and its tolerances (compare.hpp) against float32 and bf16 results
// simulated here, correct ones passing and planted bugs failing.
#include <ops/layernorm_backward/reference/compare.hpp>
#include <ops/layernorm_backward/reference/problem.hpp>
#include <ops/layernorm_backward/reference/reference.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace ref = llmk::reference;
namespace ln = llmk::reference::layernorm;
using ln::Gradients64;
using ln::HostProblem;
using ln::Shape;
using ln::Updates;
using ref::Output;
using ref::Precision;

// layernorm_backward's configurations (no tf32).
const std::vector<Precision> kPrecisions = {Precision::fp32, Precision::bf16,
                                            Precision::bf16_fp32grad};
const Output kOutputs[] = {Output::dinp, Output::dweight, Output::dbias};

std::string shape_name(const ::testing::TestParamInfo<Shape>& info) { return info.param.name; }

// --- the reference against finite differences ------------------------------------

// GPT-2's layernorm forward in double, written here from its definition:
// out = (inp − mean)·rstd ⊙ weight + bias per row, mean and biased variance
// of the row, rstd = 1/√(var + 1e-5); and L = Σ dout ⊙ out, whose gradients
// are what layernorm_backward computes.
double loss(const std::vector<double>& inp, const std::vector<double>& weight,
            const std::vector<double>& bias, const std::vector<float>& dout, std::int64_t M,
            std::int64_t C) {
  double L = 0.0;
  for (std::int64_t m = 0; m < M; ++m) {
    const double* x = inp.data() + m * C;
    double mean = 0.0, var = 0.0;
    for (std::int64_t c = 0; c < C; ++c) mean += x[c];
    mean /= double(C);
    for (std::int64_t c = 0; c < C; ++c) var += (x[c] - mean) * (x[c] - mean);
    var /= double(C);
    const double rstd = 1.0 / std::sqrt(var + 1e-5);
    for (std::int64_t c = 0; c < C; ++c)
      L += double(dout[m * C + c]) * ((x[c] - mean) * rstd * weight[c] + bias[c]);
  }
  return L;
}

// dL/dv[i] by the fourth-order central difference (f(−2h) − 8f(−h) + 8f(h) −
// f(2h))/12h, h = 1e-3: truncation error O(h⁴), rounding ~ε·|L|/h ~1e-12.
// Measured on "rows" against the formula with statistics in double: 1.4e-10
// (2.3e-9 with h = 2e-3: the 16 times of h⁴).
template <class F>
double derivative(std::vector<double>& v, std::size_t i, const F& f) {
  const double x = v[i], h = 1e-3;
  const auto at = [&](double dx) {
    v[i] = x + dx;
    return f();
  };
  const double d = (at(-2 * h) - 8 * at(-h) + 8 * at(h) - at(2 * h)) / (12 * h);
  v[i] = x;
  return d;
}

class LayernormFiniteDifferences : public ::testing::TestWithParam<Shape> {};

// With mean and rstd recomputed from inp in the forward, dL/dinp includes
// their dependence on inp: the formula's mean_c terms. The reference uses the
// problem's float mean and rstd (rounded from the same statistics: relative
// 3e-8), which moves its results by ≤ 1.7e-7 of the output's largest
// element (measured; the differences' own error is ~1e-10). Allowed: 1e-6
// of the largest element (or of 1, if larger).
TEST_P(LayernormFiniteDifferences, ReferenceIsTheGradientOfTheForward) {
  const Shape& s = GetParam();
  const std::int64_t M = s.M(), C = s.C;
  for (Precision prec : kPrecisions) {
    SCOPED_TRACE(ref::precision_name(prec));
    const HostProblem p = ln::make_problem(s, 7, prec);
    // Overwritten outputs: the gradients alone.
    const Gradients64 g = ln::reference_backward(p, {true, true, true}, 2);
    std::vector<double> inp(p.inp.begin(), p.inp.end()), weight(p.weight.begin(), p.weight.end());
    std::vector<double> bias(std::size_t(C), 0.0);
    for (std::int64_t c = 0; c < C; ++c) bias[std::size_t(c)] = 0.25 * double(c % 3) - 0.3;
    const auto L = [&] { return loss(inp, weight, bias, p.dout, M, C); };
    const auto check = [&](const char* what, std::vector<double>& v,
                           const std::vector<double>& got) {
      ASSERT_EQ(got.size(), v.size()) << what;
      double scale = 1.0, worst = 0.0;
      for (double x : got) scale = std::max(scale, std::abs(x));
      for (std::size_t i = 0; i < v.size(); ++i) {
        const double fd = derivative(v, i, L);
        worst = std::max(worst, std::abs(fd - got[i]) / scale);
        ASSERT_LE(std::abs(fd - got[i]), 1e-6 * scale)
            << what << "[" << i << "] = " << got[i] << ", finite differences " << fd;
      }
      std::printf("%s %s %s: largest difference %.2g (of the largest element)\n", s.name.c_str(),
                  ref::precision_name(prec), what, worst);
    };
    check("dinp", inp, g.dinp);
    check("dweight", weight, g.dweight);
    if (s.bias) check("dbias", bias, g.dbias);
  }
}

INSTANTIATE_TEST_SUITE_P(Tiny, LayernormFiniteDifferences,
                         ::testing::Values(Shape{"rows", 2, 3, 5},
                                           Shape{"C1", 1, 3, 1},  // dinp = 0: norm is 0 always
                                           Shape{"M1", 1, 1, 16},
                                           Shape{"nobias", 2, 2, 4, false}),
                         shape_name);

// --- problems ---------------------------------------------------------------------

// mean and rstd are the forward's statistics of inp, rounded to float:
// recomputed here in long double, each within half an ulp of float (2⁻²⁴
// relative) of the exact value, plus room for the double computation's own
// error (1e-12 of the row's largest value; float32 sums would be off ~1e-7).
TEST(LayernormProblem, MeanAndRstdAreTheForwardsStatistics) {
  std::vector<Shape> shapes = ln::test_shapes();
  shapes.push_back(ln::empty_shapes()[1]);  // C = 0: mean 0, var 0
  for (const Shape& s : shapes) {
    for (Precision prec : kPrecisions) {
      SCOPED_TRACE(s.name + " " + ref::precision_name(prec));
      const HostProblem p = ln::make_problem(s, 2024, prec);
      const std::int64_t M = s.M(), C = s.C;
      ASSERT_EQ(p.mean.size(), std::size_t(M));
      ASSERT_EQ(p.rstd.size(), std::size_t(M));
      for (std::int64_t m = 0; m < M; ++m) {
        long double mean = 0, var = 0, largest = 0;
        for (std::int64_t c = 0; c < C; ++c) {
          mean += p.inp[m * C + c];
          largest = std::max(largest, std::abs((long double)p.inp[m * C + c]));
        }
        if (C > 0) mean /= C;
        for (std::int64_t c = 0; c < C; ++c)
          var += (p.inp[m * C + c] - mean) * (p.inp[m * C + c] - mean);
        if (C > 0) var /= C;
        const long double rstd = 1 / std::sqrt(var + 1e-5L);
        const long double half_ulp = std::ldexp(1.0L, -24);
        ASSERT_LE(std::abs(p.mean[m] - mean), half_ulp * std::abs(mean) + 1e-12L * largest)
            << "row " << m << ": mean " << p.mean[m] << ", expected " << double(mean);
        ASSERT_LE(std::abs(p.rstd[m] - rstd), half_ulp * rstd * (1 + 1e-9L))
            << "row " << m << ": rstd " << p.rstd[m] << ", expected " << double(rstd);
      }
    }
  }
}

// Rows of different means and spreads: an implementation that ignores mean
// or rstd, or takes another row's, cannot pass.
TEST(LayernormProblem, RowsHaveTheirOwnMeanAndRstd) {
  const HostProblem p = ln::make_problem({"s", 4, 50, 64});
  const auto [mean_lo, mean_hi] = std::minmax_element(p.mean.begin(), p.mean.end());
  const auto [rstd_lo, rstd_hi] = std::minmax_element(p.rstd.begin(), p.rstd.end());
  // offset in [-2, 2), scale in [0.5, 2): rstd ≈ √3/scale in (0.87, 3.5],
  // give or take the spread of 64 values' variance (±11%): measured 0.80 to
  // 3.76 here.
  EXPECT_LT(*mean_lo, -1.5f);
  EXPECT_GT(*mean_hi, 1.5f);
  EXPECT_GT(*rstd_lo, 0.7f);
  EXPECT_LT(*rstd_lo, 1.0f);
  EXPECT_GT(*rstd_hi, 3.0f);
  EXPECT_LT(*rstd_hi, 4.5f);
  std::set<float> distinct(p.rstd.begin(), p.rstd.end());
  EXPECT_EQ(distinct.size(), p.rstd.size());
}

bool representable(const std::vector<float>& v) {
  for (float x : v)
    if (ref::round_to_bf16(x) != x) return false;
  return true;
}

std::vector<float> rounded(std::vector<float> v) {
  for (float& x : v) x = ref::round_to_bf16(x);
  return v;
}

// A precision's problem: the fp32 problem's values, rounded to bf16 exactly
// where the type is bf16; mean and rstd (float) of its own inp; gradients
// never 0.
TEST(LayernormProblem, PrecisionProblemsHoldTheirTypesValues) {
  const Shape s{"s", 2, 9, 40};
  const HostProblem f = ln::make_problem(s);
  EXPECT_EQ(f.precision, Precision::fp32);
  for (const auto* v : {&f.dout, &f.inp, &f.weight, &f.dinp, &f.dweight, &f.dbias})
    EXPECT_FALSE(representable(*v)) << "fp32 problems use float's bits";
  for (Precision prec : {Precision::bf16, Precision::bf16_fp32grad}) {
    SCOPED_TRACE(ref::precision_name(prec));
    const HostProblem b = ln::make_problem(s, 2024, prec);
    EXPECT_EQ(b.precision, prec);
    EXPECT_EQ(b.dout, rounded(f.dout));
    EXPECT_EQ(b.inp, rounded(f.inp));
    EXPECT_EQ(b.weight, rounded(f.weight));
    EXPECT_EQ(b.dinp, rounded(f.dinp));
    const bool bf16_grads = prec == Precision::bf16;
    EXPECT_EQ(b.dweight, bf16_grads ? rounded(f.dweight) : f.dweight);
    EXPECT_EQ(b.dbias, bf16_grads ? rounded(f.dbias) : f.dbias);
    EXPECT_NE(b.mean, f.mean) << "the statistics of the rounded inp";
    EXPECT_FALSE(representable(b.rstd)) << "mean and rstd stay float";
    for (const auto* v : {&b.dout, &b.weight, &b.dinp, &b.dweight, &b.dbias})
      for (float x : *v) ASSERT_NE(x, 0.0f);
  }
  EXPECT_EQ(ln::make_problem(s, 5).dout, ln::make_problem(s, 5).dout) << "reproducible";
  EXPECT_NE(ln::make_problem(s, 5).dout, f.dout) << "seeded";
  EXPECT_THROW(ln::make_problem(s, 2024, Precision::tf32), std::invalid_argument);
}

TEST(LayernormProblem, SizesBytesAndShapes) {
  const HostProblem p = ln::make_problem({"s", 2, 3, 4});
  EXPECT_EQ(p.dout.size(), 24u);
  EXPECT_EQ(p.inp.size(), 24u);
  EXPECT_EQ(p.dinp.size(), 24u);
  EXPECT_EQ(p.weight.size(), 4u);
  EXPECT_EQ(p.dweight.size(), 4u);
  EXPECT_EQ(p.dbias.size(), 4u);
  EXPECT_EQ(p.mean.size(), 6u);
  EXPECT_EQ(p.rstd.size(), 6u);
  EXPECT_EQ(ln::make_problem({"s", 2, 3, 4, false}).dbias.size(), 0u);

  const std::vector<Shape> gpt2 = ln::gpt2_shapes();
  ASSERT_EQ(gpt2.size(), 2u);
  EXPECT_EQ(gpt2[0].name, "gpt2_124M");
  EXPECT_EQ(gpt2[1].name, "gpt2_1558M");
  EXPECT_EQ(gpt2[0].M(), 8192);
  EXPECT_EQ(gpt2[0].C, 768);
  EXPECT_EQ(gpt2[1].C, 1600);
  // fp32, accumulated dinp: dout, inp read, dinp read and written (4 × M·C
  // floats); weight read, dweight and dbias read and written (5 × C floats);
  // mean and rstd (2 × M floats).
  const double M = 8192, C = 768;
  EXPECT_DOUBLE_EQ(gpt2[0].bytes(Precision::fp32, false), 4 * (4 * M * C + 5 * C + 2 * M));
  EXPECT_DOUBLE_EQ(gpt2[0].bytes(Precision::fp32, true), 4 * (3 * M * C + 5 * C + 2 * M));
  EXPECT_DOUBLE_EQ(gpt2[0].bytes(Precision::bf16, false), 2 * (4 * M * C + 5 * C) + 4 * 2 * M);
  EXPECT_DOUBLE_EQ(gpt2[0].bytes(Precision::bf16_fp32grad, true),
                   2 * (3 * M * C + C) + 4 * (4 * C + 2 * M));
  EXPECT_DOUBLE_EQ((Shape{"nb", 8, 1024, 768, false}.bytes(Precision::fp32, true)),
                   4 * (3 * M * C + 3 * C + 2 * M));
  EXPECT_THROW(gpt2[0].bytes(Precision::tf32, false), std::invalid_argument);

  // Test shapes: names usable in test names, all distinct, none empty; the
  // cases they are there for (problem.cpp) all present.
  std::set<std::string> names;
  bool c1 = false, m1 = false, long_m = false, nobias = false, wide = false, odd = false;
  for (const Shape& s : ln::test_shapes()) {
    EXPECT_TRUE(names.insert(s.name).second) << s.name;
    for (char ch : s.name) EXPECT_TRUE(std::isalnum((unsigned char)ch) || ch == '_') << s.name;
    EXPECT_GT(s.M() * s.C, 0) << s.name;
    c1 |= s.C == 1;
    m1 |= s.M() == 1;
    long_m |= s.M() > 2048;
    nobias |= !s.bias;
    wide |= s.C > 1024;
    odd |= s.C % 4 != 0 && s.C > 1;
  }
  EXPECT_TRUE(c1 && m1 && long_m && nobias && wide && odd);
  for (const Shape& s : ln::empty_shapes()) EXPECT_EQ(s.M() * s.C, 0) << s.name;
}

// --- the reference's own behaviour ------------------------------------------------

// The same bits on any number of threads; overwritten outputs ignore their
// initial values (NaN ones too); accumulated = initial + overwritten.
TEST(LayernormReference, ThreadsAndUpdates) {
  for (const Shape& s :
       {Shape{"odd", 3, 5, 7}, Shape{"longM", 3, 700, 5}, Shape{"M1", 1, 1, 129}}) {
    SCOPED_TRACE(s.name);
    const HostProblem p = ln::make_problem(s, 3);
    const Gradients64 g = ln::reference_backward(p, {}, 1);
    for (int threads : {2, 3, 7, 0}) {
      const Gradients64 t = ln::reference_backward(p, {}, threads);
      EXPECT_EQ(t.dinp, g.dinp) << threads << " threads";
      EXPECT_EQ(t.dweight, g.dweight) << threads << " threads";
      EXPECT_EQ(t.dbias, g.dbias) << threads << " threads";
    }
    for (int k = 0; k < 3; ++k) {
      SCOPED_TRACE(k);
      HostProblem q = p;
      Updates u;
      std::vector<float>* target[] = {&q.dinp, &q.dweight, &q.dbias};
      bool* flag[] = {&u.overwrite_dinp, &u.overwrite_dweight, &u.overwrite_dbias};
      target[k]->assign(target[k]->size(), std::numeric_limits<float>::quiet_NaN());
      *flag[k] = true;
      const Gradients64 o = ln::reference_backward(q, u, 2);
      const std::vector<double>* got[] = {&o.dinp, &o.dweight, &o.dbias};
      const std::vector<double>* acc[] = {&g.dinp, &g.dweight, &g.dbias};
      const std::vector<float>* init[] = {&p.dinp, &p.dweight, &p.dbias};
      for (int j = 0; j < 3; ++j) {
        ASSERT_EQ(got[j]->size(), acc[j]->size());
        for (std::size_t i = 0; i < got[j]->size(); ++i) {
          const double expected = j == k ? (*acc[j])[i] - double((*init[j])[i]) : (*acc[j])[i];
          ASSERT_NEAR((*got[j])[i], expected, 1e-12) << "output " << j << " element " << i;
        }
      }
    }
  }
}

// Zero-sized shapes: nothing added; overwritten outputs that have elements
// (dweight and dbias with B = 0) are zeros.
TEST(LayernormReference, EmptyShapes) {
  for (const Shape& s : ln::empty_shapes()) {
    SCOPED_TRACE(s.name);
    const HostProblem p = ln::make_problem(s);
    const Gradients64 g = ln::reference_backward(p);
    EXPECT_EQ(g.dinp, std::vector<double>(p.dinp.begin(), p.dinp.end()));
    EXPECT_EQ(g.dweight, std::vector<double>(p.dweight.begin(), p.dweight.end()));
    EXPECT_EQ(g.dbias, std::vector<double>(p.dbias.begin(), p.dbias.end()));
    const Gradients64 o = ln::reference_backward(p, {true, true, true});
    EXPECT_EQ(o.dweight, std::vector<double>(std::size_t(s.C), 0.0));
    EXPECT_EQ(o.dbias, std::vector<double>(std::size_t(s.C), 0.0));
  }
  HostProblem bad = ln::make_problem({"s", 2, 3, 4});
  bad.rstd.pop_back();
  EXPECT_THROW(ln::reference_backward(bad), std::invalid_argument);
}

// A NaN in dout[m, c] reaches all of dinp's row m (through its means),
// dweight[c] and dbias[c], and nothing else.
TEST(LayernormReference, NanPropagates) {
  const Shape s{"s", 2, 3, 5};
  HostProblem p = ln::make_problem(s);
  const std::int64_t m0 = 4, c0 = 2, C = s.C;
  p.dout[m0 * C + c0] = std::numeric_limits<float>::quiet_NaN();
  const Gradients64 g = ln::reference_backward(p);
  for (std::int64_t i = 0; i < s.M() * C; ++i)
    EXPECT_EQ(std::isnan(g.dinp[i]), i / C == m0) << "dinp " << i;
  for (std::int64_t c = 0; c < C; ++c) {
    EXPECT_EQ(std::isnan(g.dweight[c]), c == c0) << "dweight " << c;
    EXPECT_EQ(std::isnan(g.dbias[c]), c == c0) << "dbias " << c;
  }
}

// --- tolerances ------------------------------------------------------------------

TEST(LayernormTolerance, PerPrecisionAndOutput) {
  for (Output o : kOutputs) {
    EXPECT_EQ(ln::tolerance(Precision::fp32, o), ref::kFloat32Tolerance);
    EXPECT_EQ(ln::tolerance(Precision::bf16, o), ref::kBf16Tolerance);
    for (Precision p : kPrecisions) EXPECT_EQ(ln::pair_tolerance(p, o), 2 * ln::tolerance(p, o));
    EXPECT_THROW(ln::tolerance(Precision::tf32, o), std::invalid_argument);
    EXPECT_THROW(ln::pair_tolerance(Precision::tf32, o), std::invalid_argument);
  }
  EXPECT_EQ(ln::tolerance(Precision::bf16_fp32grad, Output::dinp), ref::kBf16Tolerance);
  EXPECT_EQ(ln::tolerance(Precision::bf16_fp32grad, Output::dweight), ref::kFloat32Tolerance);
  EXPECT_EQ(ln::tolerance(Precision::bf16_fp32grad, Output::dbias), ref::kFloat32Tolerance);
}

// What compare.hpp's derivation claims, simulated: the backward as a plain
// float32 program (each row's two sums, each column's sum over the rows in
// order, as a sequential loop makes them: the worst order), each bf16 output
// rounded once at the end, passes its precision's tolerance, accumulated and
// overwritten; with a planted bug it fails.
enum class Bug { none, missing_row, no_dnorm_mean, inp_for_norm };
const char* bug_name(Bug bug) {
  switch (bug) {
    case Bug::none: return "none";
    case Bug::missing_row: return "a row missing from dweight and dbias";
    case Bug::no_dnorm_mean: return "dinp without mean_c(dnorm)";
    case Bug::inp_for_norm: return "inp instead of norm";
  }
  return "?";
}

const char* short_name(Bug bug) {
  switch (bug) {
    case Bug::none: return "none";
    case Bug::missing_row: return "row";
    case Bug::no_dnorm_mean: return "mean";
    case Bug::inp_for_norm: return "inp";
  }
  return "?";
}

struct Gradients32 {
  std::vector<float> dinp, dweight, dbias;
};

Gradients32 simulate_float32(const HostProblem& p, const Updates& u, Bug bug) {
  const Shape& s = p.shape;
  const std::int64_t M = s.M(), C = s.C;
  const auto start = [](const std::vector<float>& init, bool overwrite) {
    return overwrite ? std::vector<float>(init.size(), 0.0f) : init;
  };
  Gradients32 g{start(p.dinp, u.overwrite_dinp), start(p.dweight, u.overwrite_dweight),
                start(p.dbias, u.overwrite_dbias)};
  const auto norm_of = [&](std::int64_t m, std::int64_t c) {
    const float x = p.inp[m * C + c];
    return bug == Bug::inp_for_norm ? x : (x - p.mean[m]) * p.rstd[m];
  };
  for (std::int64_t m = 0; m < M; ++m) {
    float dnorm_mean = 0.0f, dnorm_norm_mean = 0.0f;
    for (std::int64_t c = 0; c < C; ++c) {
      const float dnorm = p.dout[m * C + c] * p.weight[c];
      dnorm_mean += dnorm;
      dnorm_norm_mean += dnorm * norm_of(m, c);
    }
    dnorm_mean /= float(C);
    dnorm_norm_mean /= float(C);
    if (bug == Bug::no_dnorm_mean) dnorm_mean = 0.0f;
    for (std::int64_t c = 0; c < C; ++c) {
      const float dnorm = p.dout[m * C + c] * p.weight[c];
      g.dinp[m * C + c] += p.rstd[m] * (dnorm - dnorm_mean - norm_of(m, c) * dnorm_norm_mean);
    }
  }
  for (std::int64_t m = 0; m < M; ++m) {
    if (bug == Bug::missing_row && m == M - 1) break;
    for (std::int64_t c = 0; c < C; ++c) {
      g.dweight[c] += p.dout[m * C + c] * norm_of(m, c);
      if (s.bias) g.dbias[c] += p.dout[m * C + c];
    }
  }
  // bf16 outputs: rounded once, from the float32 result.
  std::vector<float>* outs[] = {&g.dinp, &g.dweight, &g.dbias};
  for (int k = 0; k < 3; ++k)
    if (ref::bf16_output(p.precision, kOutputs[k]))
      for (float& x : *outs[k]) x = ref::round_to_bf16(x);
  return g;
}

// Which outputs a bug must move past the tolerance (compare.hpp's claims).
bool bug_shows_in(Bug bug, Output o, const Shape& s) {
  switch (bug) {
    case Bug::none: return false;
    case Bug::missing_row:
      // with C = 1 dweight's terms dout·norm are 0: nothing to miss
      return (o == Output::dweight && s.C > 1) || (o == Output::dbias && s.bias);
    case Bug::no_dnorm_mean: return o == Output::dinp;
    case Bug::inp_for_norm: return o != Output::dbias;
  }
  return false;
}

// The largest relative L2 error of each precision and output over the
// shapes run, printed at the end of each test (compare.hpp quotes them).
void check_tolerances(const std::vector<Shape>& shapes) {
  for (const Shape& s : shapes) {
    for (Precision prec : kPrecisions) {
      SCOPED_TRACE(s.name + " " + ref::precision_name(prec));
      const HostProblem p = ln::make_problem(s, 2024, prec);
      std::string measured, broken;
      for (const Updates& u : {Updates{}, Updates{true, true, true}}) {
        const Gradients64 exact = ln::reference_backward(p, u);
        const std::vector<double>* exact_of[] = {&exact.dinp, &exact.dweight, &exact.dbias};
        for (Bug bug : {Bug::none, Bug::missing_row, Bug::no_dnorm_mean, Bug::inp_for_norm}) {
          // Bugs on accumulated outputs only: their initial values make them
          // harder to see.
          if (bug != Bug::none && u.overwrite_dinp) continue;
          const Gradients32 sim = simulate_float32(p, u, bug);
          const std::vector<float>* sim_of[] = {&sim.dinp, &sim.dweight, &sim.dbias};
          for (int k = 0; k < 3; ++k) {
            const Output o = kOutputs[k];
            if (o == Output::dbias && !s.bias) continue;
            const ref::Comparison c = ref::compare(ref::output_name(o), *sim_of[k], *exact_of[k],
                                                   k == 0 ? s.C : 0, ln::tolerance(prec, o));
            if (bug == Bug::none) {
              EXPECT_TRUE(c.ok) << (u.overwrite_dinp ? "overwritten " : "accumulated ")
                                << c.message;
              char line[64];
              std::snprintf(line, sizeof line, " %s%s %.2g", u.overwrite_dinp ? "=" : "+",
                            ref::output_name(o), c.rel_l2);
              measured += line;
            } else if (bug_shows_in(bug, o, s)) {
              EXPECT_FALSE(c.ok) << bug_name(bug) << " passes: " << c.message;
              char line[64];
              std::snprintf(line, sizeof line, " %s:%s %.2g", short_name(bug), ref::output_name(o),
                            c.rel_l2);
              broken += line;
            }
          }
        }
      }
      std::printf("%s %s:%s; broken:%s\n", s.name.c_str(), ref::precision_name(prec),
                  measured.c_str(), broken.c_str());
    }
  }
}

class LayernormToleranceIsTight : public ::testing::TestWithParam<Shape> {};

TEST_P(LayernormToleranceIsTight, CorrectPassesBrokenFails) { check_tolerances({GetParam()}); }

INSTANTIATE_TEST_SUITE_P(TestShapes, LayernormToleranceIsTight,
                         ::testing::ValuesIn(ln::test_shapes()), shape_name);

// The same at GPT-2's training shapes (M = 8192 rows): ~10 s, labelled large.
TEST(LayernormToleranceIsTightLarge, Gpt2Shapes) { check_tolerances(ln::gpt2_shapes()); }

}  // namespace
