// The float64 reference of matmul_backward (llmk_matmul_backward_reference)
// and the comparisons, bf16 rounding and precisions every other test (and
// llmk-perf) relies on (llmk_reference): checked against plain loops written
// here, against each other (loops, OpenBLAS dgemm), and on the NaN, Inf and
// size cases the comparisons must catch. (layernorm_backward's reference:
// test_layernorm_reference.cpp.)
#include "support/compare.hpp"
#include "support/problem.hpp"

#include <gtest/gtest.h>
#include <llmk/bf16.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace llmk_test;
namespace ref = llmk::reference;

// The seed's CPU loops (llm.c's matmul_backward_cpu) in double, written out
// naively: what reference_backward must reproduce exactly with Method::Loops
// (the same additions in the same order).
Gradients64 naive_loops(const HostProblem& p) {
  const Shape& s = p.shape;
  const std::int64_t M = s.M(), C = s.C, OC = s.OC;
  Gradients64 g{{p.dinp.begin(), p.dinp.end()}, {p.dweight.begin(), p.dweight.end()},
                {p.dbias.begin(), p.dbias.end()}};
  for (std::int64_t m = 0; m < M; ++m)
    for (std::int64_t o = 0; o < OC; ++o)
      for (std::int64_t c = 0; c < C; ++c)
        g.dinp[m * C + c] += double(p.dout[m * OC + o]) * double(p.weight[o * C + c]);
  for (std::int64_t o = 0; o < OC; ++o)
    for (std::int64_t m = 0; m < M; ++m) {
      const double d = p.dout[m * OC + o];
      if (s.bias) g.dbias[o] += d;
      for (std::int64_t c = 0; c < C; ++c) g.dweight[o * C + c] += d * double(p.inp[m * C + c]);
    }
  return g;
}

class ReferenceLoops : public ::testing::TestWithParam<Shape> {};

TEST_P(ReferenceLoops, EqualsTheSeedLoopsExactly) {
  const HostProblem p = make_problem(GetParam());
  const Gradients64 expected = naive_loops(p);
  for (int threads : {1, 3}) {
    const Gradients64 g = reference_backward(p, ref::Method::Loops, threads);
    EXPECT_EQ(g.dinp, expected.dinp) << threads << " threads";
    EXPECT_EQ(g.dweight, expected.dweight) << threads << " threads";
    EXPECT_EQ(g.dbias, expected.dbias) << threads << " threads";
  }
}

// The OpenBLAS path sums in another order: equal to rounding in double.
TEST_P(ReferenceLoops, BlasAgreesWithLoops) {
  if (!ref::have_blas()) GTEST_SKIP() << "built without OpenBLAS";
  const HostProblem p = make_problem(GetParam());
  const Gradients64 loops = reference_backward(p, ref::Method::Loops);
  const Gradients64 blas = reference_backward(p, ref::Method::Blas);
  ASSERT_EQ(blas.dinp.size(), loops.dinp.size());
  ASSERT_EQ(blas.dweight.size(), loops.dweight.size());
  ASSERT_EQ(blas.dbias.size(), loops.dbias.size());
  for (std::size_t i = 0; i < loops.dinp.size(); ++i)
    ASSERT_NEAR(blas.dinp[i], loops.dinp[i], 1e-10) << "dinp " << i;
  for (std::size_t i = 0; i < loops.dweight.size(); ++i)
    ASSERT_NEAR(blas.dweight[i], loops.dweight[i], 1e-10) << "dweight " << i;
  for (std::size_t i = 0; i < loops.dbias.size(); ++i)
    ASSERT_NEAR(blas.dbias[i], loops.dbias[i], 1e-10) << "dbias " << i;
}

INSTANTIATE_TEST_SUITE_P(TestShapes, ReferenceLoops, ::testing::ValuesIn(test_shapes()),
                         [](const ::testing::TestParamInfo<Shape>& info) { return info.param.name; });

// With no rows or no output channels nothing is read, so the arrays may be
// null; with C = 0 only dbias has elements.
TEST(Reference, EmptyArraysMayBeNull) {
  std::vector<double> dbias{1.0, 2.0};
  const std::vector<float> dout{0.5f, 0.25f, -1.0f, 2.0f};  // M = 2, OC = 2
  ref::accumulate_backward(dout.data(), nullptr, nullptr, 2, 0, 2, nullptr, nullptr, dbias.data());
  EXPECT_EQ(dbias, (std::vector<double>{1.0 + 0.5 - 1.0, 2.0 + 0.25 + 2.0}));
  ref::accumulate_backward(nullptr, nullptr, nullptr, 0, 3, 4, nullptr, nullptr, nullptr);
  ref::accumulate_backward(nullptr, nullptr, nullptr, 5, 3, 0, nullptr, nullptr, nullptr);
}

TEST(Reference, MethodNames) {
  EXPECT_STREQ(ref::method_name(ref::Method::Loops, seed_shape()), "loops");
  EXPECT_STREQ(ref::method_name(ref::Method::Auto, {"t", 1, 1, 1, 1}), "loops");
  EXPECT_STREQ(ref::method_name(ref::Method::Auto, seed_shape()),
               ref::have_blas() ? "OpenBLAS dgemm" : "loops");
}

// --- problems ---------------------------------------------------------------------

TEST(Problem, RandomValuesAreNonZeroInRangeAndReproducible) {
  std::vector<float> a(100000), b(100000);
  fill_random(a, 7);
  fill_random(b, 7);
  EXPECT_EQ(a, b);
  for (float v : a) {
    ASSERT_NE(v, 0.0f);
    ASSERT_GE(v, -1.0f);
    ASSERT_LT(v, 1.0f);
  }
  fill_random(b, 8);
  EXPECT_NE(a, b);
}

TEST(Problem, SizesAndFlops) {
  const HostProblem p = make_problem({"s", 2, 3, 4, 5});
  EXPECT_EQ(p.dout.size(), 30u);
  EXPECT_EQ(p.inp.size(), 24u);
  EXPECT_EQ(p.dinp.size(), 24u);
  EXPECT_EQ(p.weight.size(), 20u);
  EXPECT_EQ(p.dweight.size(), 20u);
  EXPECT_EQ(p.dbias.size(), 5u);
  EXPECT_EQ(make_problem({"s", 2, 3, 4, 5, false}).dbias.size(), 0u);
  const Shape seed = seed_shape();
  EXPECT_EQ(seed.M(), 8192);
  EXPECT_DOUBLE_EQ(seed.flops(), 4.0 * 8192 * 768 * 3072 + 8192.0 * 3072);
  EXPECT_DOUBLE_EQ(seed.bias_bytes(), 8192.0 * 3072 * 4);
}

// --- comparisons ---------------------------------------------------------------------

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(Compare, WithinAndBeyondTolerance) {
  const std::vector<double> r{1.0, -2.0, 3.0, 4.0};
  std::vector<float> out{1.0f, -2.0f, 3.0f, 4.0f};
  EXPECT_TRUE(ref::compare("x", out, r).ok);
  EXPECT_EQ(ref::compare("x", out, r).rel_l2, 0.0);
  out[2] = 3.0f + 1e-5f;  // relative L2 ≈ 1e-5/√30
  EXPECT_TRUE(ref::compare("x", out, r).ok);
  out[2] = 3.01f;
  const ref::Comparison c = ref::compare("x", out, r, 2);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.worst, 2);
  EXPECT_NE(c.message.find("(1, 0)"), std::string::npos) << c.message;
  EXPECT_NE(c.message.find("x: relative L2 error"), std::string::npos) << c.message;
}

TEST(Compare, NonFinitePositionsMustMatch) {
  const std::vector<double> r{1.0, double(kNaN), double(kInf), -double(kInf)};
  EXPECT_TRUE(ref::compare("x", std::vector<float>{1.0f, kNaN, kInf, -kInf}, r).ok);
  // NaN where the reference is finite, finite where it is NaN, the wrong infinity.
  for (const std::vector<float>& bad :
       {std::vector<float>{kNaN, kNaN, kInf, -kInf}, std::vector<float>{1.0f, 0.0f, kInf, -kInf},
        std::vector<float>{1.0f, kNaN, -kInf, -kInf}, std::vector<float>{1.0f, kNaN, kNaN, -kInf}}) {
    const ref::Comparison c = ref::compare("x", bad, r);
    EXPECT_FALSE(c.ok) << c.message;
    EXPECT_EQ(c.nonfinite_mismatches, 1u);
  }
  // Inf in the result where the reference is finite.
  EXPECT_FALSE(ref::compare("x", std::vector<float>{kInf}, std::vector<double>{1.0}).ok);
}

TEST(Compare, ZeroReferenceIsAbsoluteAndSizesMustMatch) {
  EXPECT_TRUE(ref::compare("x", std::vector<float>{0.0f, 1e-6f}, std::vector<double>{0.0, 0.0}).ok);
  EXPECT_FALSE(ref::compare("x", std::vector<float>{0.0f, 1e-3f}, std::vector<double>{0.0, 0.0}).ok);
  EXPECT_TRUE(ref::compare("x", std::vector<float>{}, std::vector<double>{}).ok);
  EXPECT_FALSE(ref::compare("x", std::vector<float>{1.0f}, std::vector<double>{}).ok);
  EXPECT_FALSE(ref::compare("x", std::vector<float>{1.0f}, std::vector<float>{1.0f, 2.0f}).ok);
}

TEST(Compare, BitwiseDifferences) {
  const float a[] = {1.0f, kNaN, 0.0f}, b[] = {1.0f, kNaN, -0.0f};
  EXPECT_EQ(ref::first_bitwise_difference(a, a, 3), -1);
  EXPECT_EQ(ref::first_bitwise_difference(a, b, 3), 2);  // 0 and -0 differ in bits
  EXPECT_EQ(ref::first_bitwise_difference(a, b, 0), -1);
  EXPECT_FALSE(bitwise_equal("x", std::vector<float>{guard_nan()},
                             std::vector<float>{std::numeric_limits<float>::quiet_NaN()}));
}

// --- bf16 on the host ------------------------------------------------------------------

float from_bits32(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
std::uint32_t bits32(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

TEST(Bf16, RoundsToNearestTiesToEven) {
  // 1 + k/256: between the bf16 neighbours 1 and 1 + 1/128 (ulp 2⁻⁷).
  EXPECT_EQ(ref::round_to_bf16(1.0f + 1.0f / 256), 1.0f);                    // tie → even (1)
  EXPECT_EQ(ref::round_to_bf16(1.0f + 3.0f / 256), 1.0f + 2.0f / 128);      // tie → even (1+2/128)
  EXPECT_EQ(ref::round_to_bf16(1.0f + 1.0f / 256 + 1.0f / 65536), 1.0f + 1.0f / 128);  // above half
  EXPECT_EQ(ref::round_to_bf16(1.0f + 1.0f / 256 - 1.0f / 65536), 1.0f);    // below half
  EXPECT_EQ(ref::round_to_bf16(-1.0f - 3.0f / 256), -1.0f - 2.0f / 128);    // sign symmetric
  EXPECT_EQ(ref::float_to_bf16_bits(1.0f), 0x3f80);
  EXPECT_EQ(ref::float_to_bf16_bits(-2.0f), 0xc000);
  // A carry into the exponent: just below 2 rounds to 2.
  EXPECT_EQ(ref::round_to_bf16(from_bits32(0x3fffffffu)), 2.0f);
  // Past the largest finite bf16 (0x7f7f): Inf; up to half an ulp above it: itself.
  EXPECT_EQ(ref::float_to_bf16_bits(from_bits32(0x7f7fffffu)), 0x7f80);
  EXPECT_EQ(ref::float_to_bf16_bits(from_bits32(0x7f7f7fffu)), 0x7f7f);
  EXPECT_EQ(ref::float_to_bf16_bits(-std::numeric_limits<float>::infinity()), 0xff80);
  // NaN stays NaN, quiet, sign kept (a signaling NaN whose payload sits in the
  // dropped bits must not become Inf).
  const std::uint16_t n = ref::float_to_bf16_bits(from_bits32(0x7f800001u));
  EXPECT_TRUE(std::isnan(ref::bf16_bits_to_float(n)));
  EXPECT_EQ(n & 0x0040, 0x0040);
  EXPECT_EQ(ref::float_to_bf16_bits(from_bits32(0xffc00000u)) & 0x8000, 0x8000);
  // Subnormals and zeros.
  EXPECT_EQ(ref::float_to_bf16_bits(-0.0f), 0x8000);
  EXPECT_EQ(ref::float_to_bf16_bits(from_bits32(0x00018000u)), 0x0002);  // tie → even
  EXPECT_EQ(ref::bf16_bits_to_float(0x0001), from_bits32(0x00010000u));
}

// Every bf16 value widens exactly and narrows back to itself; every NaN stays NaN.
TEST(Bf16, EveryValueRoundTrips) {
  for (std::uint32_t b = 0; b <= 0xffff; ++b) {
    const float f = ref::bf16_bits_to_float(std::uint16_t(b));
    ASSERT_EQ(bits32(f), b << 16);
    if (std::isnan(f)) {
      ASSERT_TRUE(std::isnan(ref::round_to_bf16(f))) << b;
    } else {
      ASSERT_EQ(ref::float_to_bf16_bits(f), b) << b;
    }
  }
  const std::vector<std::uint16_t> bits{0x3f80, 0xc000, 0x0001};
  EXPECT_EQ(ref::widen_bf16(bits.data(), bits.size()),
            (std::vector<float>{1.0f, -2.0f, from_bits32(0x00010000u)}));
  EXPECT_EQ(ref::narrow_to_bf16({1.0f, -2.0f}), (std::vector<std::uint16_t>{0x3f80, 0xc000}));
}

// The reference's rounding and llmk::bf16's, written independently, agree on
// random bit patterns (every exponent) and on values near ties.
TEST(Bf16, AgreesWithLlmkBf16) {
  std::mt19937 rng(11);
  for (int i = 0; i < 2000000; ++i) {
    std::uint32_t u = rng();
    if (i % 4 == 1) u = (u & 0xffff0000u) | 0x8000u;           // exact tie
    if (i % 4 == 2) u = (u & 0xffff0000u) | 0x7fffu;           // just below
    if (i % 4 == 3) u = (u & 0xffff0000u) | (0x8000u + (rng() & 0xffu));  // just above
    const float f = from_bits32(u);
    const llmk::bf16 h(f);
    if (std::isnan(f)) {
      ASSERT_TRUE(std::isnan(float(h))) << std::hex << u;
      ASSERT_TRUE(std::isnan(ref::round_to_bf16(f))) << std::hex << u;
    } else {
      ASSERT_EQ(h.bits, ref::float_to_bf16_bits(f)) << std::hex << u;
    }
  }
}

// --- precisions --------------------------------------------------------------------------

TEST(Precision, NamesRoundTrip) {
  const char* names[] = {"fp32", "tf32", "bf16", "bf16-fp32grad"};
  ASSERT_EQ(ref::all_precisions().size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    const Precision p = ref::all_precisions()[i];
    EXPECT_STREQ(ref::precision_name(p), names[i]);
    Precision parsed = Precision::fp32;
    EXPECT_TRUE(ref::parse_precision(names[i], parsed)) << names[i];
    EXPECT_EQ(parsed, p);
  }
  for (const char* bad : {"", "FP32", "bf16_fp32grad", "tf32 ", "fp16", "bf16-fp32"}) {
    Precision parsed = Precision::tf32;
    EXPECT_FALSE(ref::parse_precision(bad, parsed)) << "'" << bad << "'";
    EXPECT_EQ(parsed, Precision::tf32) << "unchanged";
  }
  EXPECT_FALSE(ref::bf16_inputs(Precision::fp32));
  EXPECT_FALSE(ref::bf16_inputs(Precision::tf32));
  EXPECT_TRUE(ref::bf16_inputs(Precision::bf16));
  EXPECT_TRUE(ref::bf16_inputs(Precision::bf16_fp32grad));
  EXPECT_TRUE(ref::bf16_output(Precision::bf16_fp32grad, Output::dinp));
  EXPECT_FALSE(ref::bf16_output(Precision::bf16_fp32grad, Output::dweight));
  EXPECT_FALSE(ref::bf16_output(Precision::bf16_fp32grad, Output::dbias));
  EXPECT_TRUE(ref::bf16_output(Precision::bf16, Output::dbias));
  EXPECT_FALSE(ref::bf16_output(Precision::tf32, Output::dinp));
}

bool representable(const std::vector<float>& v) {
  for (float x : v)
    if (ref::round_to_bf16(x) != x) return false;
  return true;
}

// A precision's problem: the fp32 problem's values, rounded to bf16 exactly
// where the type is bf16; pre_gelu only with GELU, in [-3, 3), never 0.
TEST(Problem, PrecisionProblemsHoldTheirTypesValues) {
  const Shape s{"s", 2, 9, 24, 40};
  const HostProblem f = make_problem(s);
  const HostProblem fg = make_problem(s, 2024, {Precision::fp32, true});
  EXPECT_TRUE(f.pre_gelu.empty());
  EXPECT_FALSE(f.gelu);
  EXPECT_TRUE(fg.gelu);
  ASSERT_EQ(fg.pre_gelu.size(), std::size_t(s.M() * s.C));
  for (float x : fg.pre_gelu) {
    ASSERT_NE(x, 0.0f);
    ASSERT_GE(x, -3.0f);
    ASSERT_LT(x, 3.0f);
  }
  EXPECT_FALSE(representable(fg.pre_gelu)) << "fp32's pre_gelu uses float's bits";
  for (const auto* v : {&f.dout, &f.inp, &f.weight, &f.dinp, &f.dweight, &f.dbias})
    EXPECT_FALSE(representable(*v)) << "fp32 problems use float's bits";
  // GELU adds pre_gelu and changes nothing else; tf32 is fp32's problem.
  EXPECT_EQ(fg.dout, f.dout);
  EXPECT_EQ(fg.inp, f.inp);
  EXPECT_EQ(fg.dinp, f.dinp);
  const HostProblem t = make_problem(s, 2024, {Precision::tf32, true});
  EXPECT_EQ(t.dout, f.dout);
  EXPECT_EQ(t.weight, f.weight);
  EXPECT_EQ(t.dweight, f.dweight);
  EXPECT_EQ(t.pre_gelu, fg.pre_gelu);
  const auto rounded = [](std::vector<float> v) {
    for (float& x : v) x = ref::round_to_bf16(x);
    return v;
  };
  for (Precision p : {Precision::bf16, Precision::bf16_fp32grad}) {
    SCOPED_TRACE(ref::precision_name(p));
    const HostProblem b = make_problem(s, 2024, {p, true});
    EXPECT_EQ(b.precision, p);
    EXPECT_EQ(b.dout, rounded(f.dout));
    EXPECT_EQ(b.inp, rounded(f.inp));
    EXPECT_EQ(b.weight, rounded(f.weight));
    EXPECT_EQ(b.pre_gelu, rounded(fg.pre_gelu));
    EXPECT_EQ(b.dinp, rounded(f.dinp));
    const bool bf16_grads = p == Precision::bf16;
    EXPECT_EQ(b.dweight, bf16_grads ? rounded(f.dweight) : f.dweight);
    EXPECT_EQ(b.dbias, bf16_grads ? rounded(f.dbias) : f.dbias);
    for (const auto* v : {&b.dout, &b.inp, &b.weight, &b.dinp, &b.pre_gelu})
      for (float x : *v) ASSERT_NE(x, 0.0f);
  }
}

// --- GELU and overwrite in the reference -------------------------------------------

long double gelu_ld(long double x) {
  const long double s = std::sqrt(2.0L / 3.14159265358979323846264338327950288L);
  return 0.5L * x * (1.0L + std::tanh(s * (x + 0.044715L * x * x * x)));
}

TEST(GeluGrad, IsTheDerivativeOfGpt2Gelu) {
  EXPECT_DOUBLE_EQ(ref::gelu_grad(0.0), 0.5);
  for (double x = -6.0; x <= 6.0; x += 0.01) {
    const long double h = 1e-5L;
    const double fd = double((gelu_ld(x + h) - gelu_ld(x - h)) / (2 * h));
    ASSERT_NEAR(ref::gelu_grad(x), fd, 1e-9) << "x = " << x;
    ASSERT_NEAR(ref::gelu_grad(-x), 1.0 - ref::gelu_grad(x), 1e-14) << "x = " << x;
  }
  // Over pre_gelu's range [-3, 3) gelu' takes values from -0.128 to 1.128.
  EXPECT_NEAR(ref::gelu_grad(-1.5), -0.1277, 1e-3);
  EXPECT_NEAR(ref::gelu_grad(1.5), 1.1277, 1e-3);
  EXPECT_TRUE(std::isnan(ref::gelu_grad(std::nan(""))));
}

// With GELU: dinp = init + (dout·W) ⊙ gelu'(pre_gelu), from naive loops here;
// overwritten outputs ignore their initial values (NaN ones too).
TEST(Reference, GeluAndOverwrite) {
  const Shape s{"s", 2, 7, 9, 11};
  HostProblem p = make_problem(s, 5, {Precision::fp32, true});
  HostProblem zero = p;  // the plain gradients, from zero initial values
  for (auto* v : {&zero.dinp, &zero.dweight, &zero.dbias}) v->assign(v->size(), 0.0f);
  zero.gelu = false;
  zero.pre_gelu.clear();
  const Gradients64 g0 = naive_loops(zero);
  const Gradients64 g = reference_backward(p, ref::Method::Loops, 2);
  for (std::size_t i = 0; i < g.dinp.size(); ++i)
    ASSERT_NEAR(g.dinp[i], double(p.dinp[i]) + g0.dinp[i] * ref::gelu_grad(p.pre_gelu[i]), 1e-12)
        << i;
  for (std::size_t i = 0; i < g.dweight.size(); ++i)
    ASSERT_NEAR(g.dweight[i], double(p.dweight[i]) + g0.dweight[i], 1e-12) << i;
  for (std::size_t i = 0; i < g.dbias.size(); ++i)
    ASSERT_NEAR(g.dbias[i], double(p.dbias[i]) + g0.dbias[i], 1e-12) << i;
  // Overwrite each output in turn, its initial values NaN.
  for (int k = 0; k < 3; ++k) {
    SCOPED_TRACE(k);
    HostProblem q = p;
    Updates u;
    std::vector<float>* target[] = {&q.dinp, &q.dweight, &q.dbias};
    bool* flag[] = {&u.overwrite_dinp, &u.overwrite_dweight, &u.overwrite_dbias};
    target[k]->assign(target[k]->size(), std::numeric_limits<float>::quiet_NaN());
    *flag[k] = true;
    const Gradients64 o = reference_backward(q, ref::Method::Auto, 1, u);
    const std::vector<double>* got[] = {&o.dinp, &o.dweight, &o.dbias};
    const std::vector<double>* acc[] = {&g.dinp, &g.dweight, &g.dbias};
    const std::vector<float>* init[] = {&p.dinp, &p.dweight, &p.dbias};
    for (int j = 0; j < 3; ++j)
      for (std::size_t i = 0; i < got[j]->size(); ++i) {
        // The overwritten output: the accumulated one less its initial value.
        const double expected = j == k ? (*acc[j])[i] - double((*init[j])[i]) : (*acc[j])[i];
        ASSERT_NEAR((*got[j])[i], expected, 1e-12) << "output " << j << " element " << i;
      }
  }
}

// --- tolerances ------------------------------------------------------------------------

TEST(Tolerance, PerPrecisionAndOutput) {
  for (Output o : {Output::dinp, Output::dweight, Output::dbias}) {
    EXPECT_EQ(tolerance(Precision::fp32, o), ref::kFloat32Tolerance);
    EXPECT_EQ(tolerance(Precision::tf32, o), ref::kTf32Tolerance);
    EXPECT_EQ(tolerance(Precision::bf16, o), ref::kBf16Tolerance);
    for (Precision p : ref::all_precisions()) EXPECT_EQ(pair_tolerance(p, o), 2 * tolerance(p, o));
  }
  EXPECT_EQ(tolerance(Precision::bf16_fp32grad, Output::dinp), ref::kBf16Tolerance);
  EXPECT_EQ(tolerance(Precision::bf16_fp32grad, Output::dweight), ref::kFloat32Tolerance);
  EXPECT_EQ(tolerance(Precision::bf16_fp32grad, Output::dbias), ref::kFloat32Tolerance);
  EXPECT_EQ(ref::kFloat32Tolerance, 5e-5);
  EXPECT_EQ(ref::kTf32Tolerance, 1.25e-3);
  EXPECT_EQ(ref::kBf16Tolerance, 4e-3);
}

// What the derivations in reference/compare.hpp claim, simulated on the
// shapes every precision is tested on (accuracy_shapes(), GELU off and on:
// the contract tests', support/matmul_backward_adapter.hpp): results as a correct
// implementation makes them pass their tolerance; results missing one
// product per sum, or with a row (a block for dbias) left unwritten, fail it.
//  - bf16 outputs: the float64 result rounded once to bf16 (the worst case
//    allowed: the float32 sum's own error only adds ≤ 5e-5);
//  - tf32: products of inputs truncated to 10 mantissa bits (worse than
//    rounding: a bias), the sums in double, rounded to float; they must also
//    FAIL kFloat32Tolerance (an fp32 test catches a silent TF32), and the
//    same inputs rounded to bf16 instead (bf16 math where TF32 was asked
//    for) FAIL kTf32Tolerance.
// The missing-product and unwritten-row claims hold for sums of up to ~2100
// terms and up to ~2100 rows (at 8192, on the long8k shapes' few elements,
// one product is within bf16's L2 noise: bf16 outputs are checked element by
// element there, Compare.Bf16WithinBounds); past that (wideOC's dinp, 50257 terms, and its
// dweight, 50257 rows) one product or one row is below the bf16/TF32 noise
// (printed): there the poisoned outputs of the Overwrite tests catch
// unwritten elements, and the fp32 tests missing products.

float truncate_to_tf32(float x) {
  if (!std::isfinite(x)) return x;
  return from_bits32(bits32(x) & 0xffffe000u);
}

// The result as a precision stores it: rounded to bf16 or float.
std::vector<float> stored(const std::vector<double>& v, bool bf16) {
  std::vector<float> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i)
    out[i] = bf16 ? ref::round_to_bf16(float(v[i])) : float(v[i]);
  return out;
}

class ToleranceIsTight : public ::testing::TestWithParam<Shape> {};

TEST_P(ToleranceIsTight, CorrectPassesBrokenFails) {
  const Shape& s = GetParam();
  const std::int64_t M = s.M(), C = s.C, OC = s.OC;
  for (Precision prec : {Precision::fp32, Precision::tf32, Precision::bf16,
                         Precision::bf16_fp32grad}) {
    for (bool gelu : {false, true}) {
      SCOPED_TRACE(std::string(ref::precision_name(prec)) + (gelu ? " with GELU" : ""));
      const HostProblem p = make_problem(s, 2024, {prec, gelu});
      const Gradients64 exact = reference_backward(p);
      const Output outs[] = {Output::dinp, Output::dweight, Output::dbias};
      const std::vector<double>* exact_of[] = {&exact.dinp, &exact.dweight, &exact.dbias};
      const std::int64_t cols[] = {C, C, 0};
      // Sums' lengths and rows of each output.
      const std::int64_t terms[] = {OC, M, M}, rows[] = {M, OC, 1};
      const auto bf16 = [&](Output o) { return ref::bf16_output(prec, o); };

      // As a correct implementation makes them.
      Gradients64 correct = exact;
      if (prec == Precision::tf32) {
        HostProblem t = p;
        for (auto* v : {&t.dout, &t.inp, &t.weight})
          for (float& x : *v) x = truncate_to_tf32(x);
        correct = reference_backward(t);
      }
      for (int k = 0; k < 3; ++k) {
        const std::vector<double>& ok = k == 0 ? correct.dinp : k == 1 ? correct.dweight
                                                                         : correct.dbias;
        const ref::Comparison c = ref::compare(ref::output_name(outs[k]), stored(ok, bf16(outs[k])),
                                               *exact_of[k], cols[k], tolerance(prec, outs[k]));
        EXPECT_TRUE(c.ok) << c.message;
        if (prec == Precision::tf32 && terms[k] >= 8 && ok.size() >= 8) {
          const ref::Comparison f = ref::compare("tf32 as fp32", stored(ok, false), *exact_of[k],
                                                 cols[k], ref::kFloat32Tolerance);
          EXPECT_FALSE(f.ok) << ref::output_name(outs[k]) << ": " << f.message;
        }
      }
      // TF32 asked for, bf16 math done: inputs rounded to bf16 (dbias, a sum
      // of dout alone, has half the error and is left out).
      if (prec == Precision::tf32) {
        HostProblem b = p;
        for (auto* v : {&b.dout, &b.inp, &b.weight})
          for (float& x : *v) x = ref::round_to_bf16(x);
        const Gradients64 as_bf16 = reference_backward(b);
        for (int k = 0; k < 2; ++k) {
          const std::vector<double>& out = k == 0 ? as_bf16.dinp : as_bf16.dweight;
          if (terms[k] < 8 || out.size() < 8) continue;
          const ref::Comparison c = ref::compare("bf16 math", stored(out, false), *exact_of[k],
                                                 cols[k], tolerance(prec, outs[k]));
          EXPECT_FALSE(c.ok) << ref::output_name(outs[k]) << " in bf16 passes tf32's tolerance: "
                             << c.message;
        }
      }

      // One product missing from every sum: dout's last column (every dinp
      // sum) or last row (every dweight and dbias sum) taken out.
      for (int k = 0; k < 3; ++k) {
        if (exact_of[k]->empty() || (k == 2 && !s.bias)) continue;
        HostProblem broken = p;
        for (std::int64_t m = 0; m < M; ++m)
          for (std::int64_t o = 0; o < OC; ++o)
            if ((k == 0 && o == OC - 1) || (k > 0 && m == M - 1)) broken.dout[m * OC + o] = 0.0f;
        const Gradients64 b = reference_backward(broken);
        const std::vector<double>& out = k == 0 ? b.dinp : k == 1 ? b.dweight : b.dbias;
        const ref::Comparison c = ref::compare(ref::output_name(outs[k]), stored(out, bf16(outs[k])),
                                               *exact_of[k], cols[k], tolerance(prec, outs[k]));
        if (terms[k] <= 2100) {
          EXPECT_FALSE(c.ok) << "a product missing from every sum of " << terms[k]
                             << " terms passes: " << c.message;
        } else {
          std::printf("%s %s: one product missing of %lld: %s\n", ref::precision_name(prec),
                      ref::output_name(outs[k]), static_cast<long long>(terms[k]),
                      c.message.c_str());
        }
      }

      // A row left unwritten (dbias: its first min(OC, 16) elements): the
      // initial values instead of the results.
      for (int k = 0; k < 3; ++k) {
        if (exact_of[k]->empty() || (k == 2 && !s.bias) || (k != 2 && C == 0)) continue;
        const std::vector<float>& init = k == 0 ? p.dinp : k == 1 ? p.dweight : p.dbias;
        std::vector<float> out = stored(*exact_of[k], bf16(outs[k]));
        const std::size_t n = k == 2 ? std::size_t(std::min<std::int64_t>(OC, 16)) : std::size_t(C);
        std::copy(init.begin(), init.begin() + std::ptrdiff_t(n), out.begin());
        const ref::Comparison c = ref::compare(ref::output_name(outs[k]), out, *exact_of[k],
                                               cols[k], tolerance(prec, outs[k]));
        if (rows[k] <= 2100) {
          EXPECT_FALSE(c.ok) << "a row left unwritten passes: " << c.message;
        } else {
          std::printf("%s %s: one row unwritten of %lld: %s\n", ref::precision_name(prec),
                      ref::output_name(outs[k]), static_cast<long long>(rows[k]),
                      c.message.c_str());
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AccuracyShapes, ToleranceIsTight, ::testing::ValuesIn(accuracy_shapes()),
                         [](const ::testing::TestParamInfo<Shape>& info) { return info.param.name; });

// The test of "rounded once" (support/compare.hpp): the float64 values
// rounded once pass; through float32 sums (errors ~1e-6) they pass; rounded
// twice (to bf16, then a product with a float factor or a sum rounded again)
// they fail, though their relative L2 error passes kBf16Tolerance.
TEST(Compare, RoundedOnceToBf16) {
  const HostProblem p = make_problem({"r", 2, 64, 96, 288}, 3, {Precision::bf16, true});
  const Gradients64 g = reference_backward(p);
  const std::vector<double>& r = g.dinp;
  std::vector<float> once(r.size()), noisy(r.size()), twice(r.size());
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> jitter(-2e-6, 2e-6);
  for (std::size_t i = 0; i < r.size(); ++i) {
    once[i] = ref::round_to_bf16(float(r[i]));
    noisy[i] = ref::round_to_bf16(float(r[i] * (1 + jitter(rng))));
    // The product rounded first, then multiplied by a factor near 1 and rounded again.
    const double f = 1.0 + 0.3 * double(p.inp[i % p.inp.size()]);
    twice[i] = ref::round_to_bf16(float(double(ref::round_to_bf16(float(r[i] / f))) * f));
  }
  EXPECT_TRUE(rounded_once_to_bf16("once", once, r, 96));
  EXPECT_TRUE(rounded_once_to_bf16("float32 sums", noisy, r, 96));
  EXPECT_FALSE(rounded_once_to_bf16("twice", twice, r, 96));
  EXPECT_TRUE(ref::compare("twice", twice, r, 96, ref::kBf16Tolerance).ok);
  EXPECT_FALSE(rounded_once_to_bf16("size", std::vector<float>(3), r, 96));
}

// The per-element check of bf16 results (support/compare.hpp,
// bf16_within_bounds, with matmul's float32_error_bounds) on sums of 8192
// terms (dinp of long8kOC, dweight and dbias of long8kM), GELU off and on:
// float32 sums (in order, one rounding each) rounded once pass it, as rounded
// once and as not; one product missing from every sum fails both; a second
// rounding fails "rounded once"; a 0.3% scale error, within kBf16Tolerance,
// fails "not rounded once" on the outputs of ≥ 2000 elements.
TEST(Compare, Bf16WithinBounds) {
  for (const Shape& s : {Shape{"long8kOC", 1, 3, 5, 8192}, Shape{"long8kM", 1, 8192, 3, 40}}) {
    for (const bool gelu : {false, true}) {
      SCOPED_TRACE(s.name + (gelu ? " with GELU" : ""));
      const HostProblem p = make_problem(s, 17, {Precision::bf16, gelu});
      const Gradients64 exact = reference_backward(p);
      const Gradients64 bounds = ref::float32_error_bounds(p, exact);
      const std::int64_t M = s.M(), C = s.C, OC = s.OC;
      // float32 sums in order, from the bf16 inputs (exact products), with
      // product `skip` of each sum left out (-1: none).
      const auto float_sums = [&](std::int64_t skip) {
        std::vector<float> dinp(static_cast<std::size_t>(M * C)),
            dweight(static_cast<std::size_t>(OC * C)), dbias(static_cast<std::size_t>(OC));
        for (std::int64_t m = 0; m < M; ++m)
          for (std::int64_t c = 0; c < C; ++c) {
            float acc = 0;
            for (std::int64_t o = 0; o < OC; ++o)
              if (o != skip) acc += p.dout[m * OC + o] * p.weight[o * C + c];
            if (gelu) acc *= float(ref::gelu_grad(p.pre_gelu[m * C + c]));
            dinp[m * C + c] = p.dinp[m * C + c] + acc;
          }
        for (std::int64_t o = 0; o < OC; ++o) {
          float b = 0;
          for (std::int64_t c = 0; c < C; ++c) {
            float acc = 0;
            for (std::int64_t m = 0; m < M; ++m)
              if (m != skip) acc += p.dout[m * OC + o] * p.inp[m * C + c];
            dweight[o * C + c] = p.dweight[o * C + c] + acc;
          }
          for (std::int64_t m = 0; m < M; ++m)
            if (m != skip) b += p.dout[m * OC + o];
          dbias[o] = p.dbias[o] + b;
        }
        return std::vector<std::vector<float>>{dinp, dweight, dbias};
      };
      const auto rounded = [](std::vector<float> v) {
        for (float& x : v) x = ref::round_to_bf16(x);
        return v;
      };
      const std::vector<std::vector<float>> sums = float_sums(-1), missing = float_sums(0);
      const std::vector<double>* exact_of[] = {&exact.dinp, &exact.dweight, &exact.dbias};
      const std::vector<double>* bound_of[] = {&bounds.dinp, &bounds.dweight, &bounds.dbias};
      const std::vector<float>* init_of[] = {&p.dinp, &p.dweight, &p.dbias};
      const std::int64_t terms[] = {OC, M, M}, cols[] = {C, C, 0};
      for (int k = 0; k < 3; ++k) {
        const std::vector<double>& r = *exact_of[k];
        if (r.empty()) continue;
        const char* what = ref::output_name(Output(k));
        SCOPED_TRACE(what);
        const std::vector<double>& b = *bound_of[k];
        const std::vector<float>& init = *init_of[k];
        const std::vector<float> once = rounded(sums[std::size_t(k)]);
        EXPECT_TRUE(bf16_within_bounds(what, once, r, b, init, true, cols[k]));
        EXPECT_TRUE(bf16_within_bounds(what, once, r, b, init, false, cols[k]));
        if (terms[k] >= 8192) {
          const std::vector<float> bad = rounded(missing[std::size_t(k)]);
          EXPECT_FALSE(bf16_within_bounds(what, bad, r, b, init, true, cols[k]));
          // (Three roundings allow 1.5 ulp, more than a missing product
          // (≈ 1% of a sum): it shows on some of ≥ 100 elements.)
          if (r.size() >= 100)
            EXPECT_FALSE(bf16_within_bounds(what, bad, r, b, init, false, cols[k]));
        }
        // Rounded twice: the sum, then with its initial value.
        std::vector<float> twice(r.size());
        for (std::size_t i = 0; i < r.size(); ++i)
          twice[i] = ref::round_to_bf16(
              init[i] + ref::round_to_bf16(sums[std::size_t(k)][i] - init[i]));
        if (r.size() >= 100)
          EXPECT_FALSE(bf16_within_bounds(what, twice, r, b, init, true, cols[k]));
        EXPECT_TRUE(bf16_within_bounds(what, twice, r, b, init, false, cols[k]));
        // A systematic 0.3%: the L2 measure passes it, the projection does not.
        std::vector<float> scaled(r.size());
        for (std::size_t i = 0; i < r.size(); ++i)
          scaled[i] = ref::round_to_bf16(float(r[i] * 1.003));
        if (r.size() >= 2000) {
          EXPECT_TRUE(ref::compare(what, scaled, r, cols[k], ref::kBf16Tolerance).ok);
          EXPECT_FALSE(bf16_within_bounds(what, scaled, r, b, init, false, cols[k]));
        }
      }
    }
  }
}

TEST(Compare, Bf16Buffers) {
  const std::vector<std::uint16_t> out{0x3f80, 0xc000, 0x7fc0};  // 1, -2, NaN
  const std::vector<double> r{1.0, -2.0, double(kNaN)};
  EXPECT_TRUE(ref::compare_bf16("x", out.data(), r.data(), 3, 0, 1e-12).ok);
  const std::vector<double> r2{1.0, -2.01, double(kNaN)};
  EXPECT_FALSE(ref::compare_bf16("x", out.data(), r2.data(), 3, 0, 1e-3).ok);
  const std::vector<float> rf{1.0f, -2.0f, 0.0f};
  EXPECT_FALSE(ref::compare_bf16("x", out.data(), rf.data(), 3, 0, 1.0).ok);  // NaN vs finite
}

}  // namespace
