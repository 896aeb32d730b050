// The float64 reference and the comparisons every other test (and llmk-perf)
// relies on (llmk_matmul_backward_reference): checked against plain loops
// written here, against each other (loops, OpenBLAS dgemm), and on the NaN,
// Inf and size cases the comparisons must catch.
#include "support/compare.hpp"
#include "support/problem.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
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

}  // namespace
