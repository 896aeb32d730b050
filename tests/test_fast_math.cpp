// The host's exp, exp2 and tanh of the kernels' loops (kernels/fast_math.hpp)
// against double, named reference.FastMath.<case>:
//  - Exp, Exp2, ExpNonPositive, Exp2NonPositive: at 2^20 points across the
//    range where the result is a normal float (x ≤ 0 for the last two),
//    within 3 ulp of the exact value rounded to float; below it 0, above it
//    +inf; NaN through; −inf gives 0 (a masked score's weight).
//  - Tanh: within 2e-7 absolute over [−20, 20] (2^20 points) and ±1 beyond;
//    odd; NaN through.
// (A coefficient of exp's polynomial off by 1 % fails Exp: planted once.)
#include <gtest/gtest.h>
#include <kernels/fast_math.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace {

namespace hm = llmk::kernels::host_math;

// ulps between a float result and the exact value rounded to float.
double ulps(const float got, const double exact) {
  const float want = static_cast<float>(exact);
  const double ulp = std::nextafter(want, std::numeric_limits<float>::infinity()) - want;
  return std::fabs(double(got) - double(want)) / ulp;
}

template <class F, class G>
void sweep(F fast, G exact, const double lo, const double hi, const double max_ulps) {
  constexpr int n = 1 << 20;
  double worst = 0, at = 0;
  for (int i = 0; i <= n; ++i) {
    const float x = static_cast<float>(lo + (hi - lo) * i / n);
    const double u = ulps(fast(x), exact(double(x)));
    if (u > worst) worst = u, at = x;
  }
  EXPECT_LE(worst, max_ulps) << "worst at x = " << at;
}

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

TEST(FastMath, Exp) {
  sweep([](float x) { return hm::exp(x); }, [](double x) { return std::exp(x); }, -87.3, 88.7, 3);
  sweep([](float x) { return hm::exp(x); }, [](double x) { return std::exp(x); }, -1, 1, 3);
  EXPECT_EQ(hm::exp(0.0f), 1.0f);
  EXPECT_EQ(hm::exp(-88.0f), 0.0f);
  EXPECT_EQ(hm::exp(-kInf), 0.0f);
  EXPECT_EQ(hm::exp(89.0f), kInf);
  EXPECT_EQ(hm::exp(kInf), kInf);
  EXPECT_TRUE(std::isnan(hm::exp(kNan)));
}

TEST(FastMath, Exp2) {
  sweep([](float x) { return hm::exp2(x); }, [](double x) { return std::exp2(x); }, -125.9,
        127.9, 3);
  EXPECT_EQ(hm::exp2(0.0f), 1.0f);
  EXPECT_EQ(hm::exp2(10.0f), 1024.0f);
  EXPECT_EQ(hm::exp2(-127.0f), 0.0f);
  EXPECT_EQ(hm::exp2(-kInf), 0.0f);
  EXPECT_EQ(hm::exp2(128.0f), kInf);
  EXPECT_TRUE(std::isnan(hm::exp2(kNan)));
}

TEST(FastMath, ExpNonPositive) {
  sweep([](float x) { return hm::exp_nonpositive(x); }, [](double x) { return std::exp(x); },
        -87.3, 0, 3);
  sweep([](float x) { return hm::exp_nonpositive(x); }, [](double x) { return std::exp(x); },
        -1, 1e-6, 3);  // a rounding above 0, as s − lse may be
  EXPECT_EQ(hm::exp_nonpositive(0.0f), 1.0f);
  EXPECT_EQ(hm::exp_nonpositive(-88.0f), 0.0f);
  EXPECT_EQ(hm::exp_nonpositive(-kInf), 0.0f);
  EXPECT_TRUE(std::isnan(hm::exp_nonpositive(kNan)));
}

TEST(FastMath, Exp2NonPositive) {
  sweep([](float x) { return hm::exp2_nonpositive(x); }, [](double x) { return std::exp2(x); },
        -125.9, 0, 3);
  sweep([](float x) { return hm::exp2_nonpositive(x); }, [](double x) { return std::exp2(x); },
        -1, 0, 3);
  EXPECT_EQ(hm::exp2_nonpositive(0.0f), 1.0f);
  EXPECT_EQ(hm::exp2_nonpositive(-0.0f), 1.0f);
  EXPECT_EQ(hm::exp2_nonpositive(-10.0f), 1.0f / 1024);
  EXPECT_EQ(hm::exp2_nonpositive(-127.0f), 0.0f);
  EXPECT_EQ(hm::exp2_nonpositive(-kInf), 0.0f);
  EXPECT_TRUE(std::isnan(hm::exp2_nonpositive(kNan)));
}

TEST(FastMath, Tanh) {
  constexpr int n = 1 << 20;
  double worst = 0, at = 0;
  for (int i = 0; i <= n; ++i) {
    const float x = -20.0f + 40.0f * float(i) / n;
    const double err = std::fabs(double(hm::tanh(x)) - std::tanh(double(x)));
    if (err > worst) worst = err, at = x;
    ASSERT_EQ(hm::tanh(-x), -hm::tanh(x)) << "x = " << x;
  }
  EXPECT_LE(worst, 2e-7) << "worst at x = " << at;
  EXPECT_EQ(hm::tanh(50.0f), 1.0f);
  EXPECT_EQ(hm::tanh(-kInf), -1.0f);
  EXPECT_EQ(hm::tanh(0.0f), 0.0f);
  EXPECT_TRUE(std::isnan(hm::tanh(kNan)));
}

// GELU's x·(1 + tanh u)/2 as x·σ(2u): relative error against double's, over
// u from −40 to 40 (x = 1: the factor itself; x = −3: a sign), where the
// tanh form loses all its digits to 1 + t once u < −9.
TEST(FastMath, HalfXOnePlusTanh) {
  constexpr int n = 1 << 20;
  for (const float x : {1.0f, -3.0f}) {
    double worst = 0, at = 0;
    for (int i = 0; i <= n; ++i) {
      const float u = -40.0f + 80.0f * float(i) / n;
      const double exact = double(x) / (1.0 + std::exp(-2.0 * double(u)));
      const double err = std::fabs(double(hm::half_x_one_plus_tanh(x, u)) - exact) / std::fabs(exact);
      if (err > worst) worst = err, at = u;
    }
    EXPECT_LE(worst, 4e-7) << "x = " << x << ", worst at u = " << at;
  }
  EXPECT_EQ(hm::half_x_one_plus_tanh(2.0f, 50.0f), 2.0f);
  EXPECT_EQ(hm::half_x_one_plus_tanh(2.0f, 0.0f), 1.0f);
  EXPECT_EQ(hm::half_x_one_plus_tanh(-5.0f, -kInf), -5.0f * hm::exp_in_range(-87.0f) /
                                                        (1.0f + hm::exp_in_range(-87.0f)));
  EXPECT_TRUE(std::isnan(hm::half_x_one_plus_tanh(kNan, kNan)));
}

}  // namespace

