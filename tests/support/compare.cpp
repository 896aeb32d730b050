#include "support/compare.hpp"

#include <core/reference/bf16.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace llmk_test {
namespace {

// LLMK_TEST_PRINT_ERRORS=1: every comparison's line on stdout, passed or not
// (the errors measured, against their tolerances).
::testing::AssertionResult to_assertion(const llmk::reference::Comparison& c) {
  static const bool print = std::getenv("LLMK_TEST_PRINT_ERRORS") != nullptr;
  if (print) std::printf("  %s\n", c.message.c_str());
  if (c.ok) return ::testing::AssertionSuccess() << c.message;
  return ::testing::AssertionFailure() << c.message;
}

}  // namespace

::testing::AssertionResult matches_reference(const char* what, const std::vector<float>& out,
                                             const std::vector<double>& ref, std::int64_t cols,
                                             double tolerance) {
  return to_assertion(llmk::reference::compare(what, out, ref, cols, tolerance));
}

::testing::AssertionResult matches_reference(const char* what, const std::vector<float>& out,
                                             const std::vector<float>& ref, std::int64_t cols,
                                             double tolerance) {
  return to_assertion(llmk::reference::compare(what, out, ref, cols, tolerance));
}

namespace {

// The bf16 value nearest to r (ties to the even significand), from the
// reference's rounding of float(r) and its two neighbours (a double rounded
// through float could land on the wrong side of a midpoint).
float nearest_bf16(double r) {
  namespace ref = llmk::reference;
  const std::uint16_t b = ref::float_to_bf16_bits(float(r));
  float best = ref::bf16_bits_to_float(b);
  for (int step : {-1, 1}) {
    const std::uint16_t magnitude = std::uint16_t(b & 0x7fff);
    if ((step < 0 && magnitude == 0) || (step > 0 && magnitude >= 0x7f7f)) continue;
    const std::uint16_t n = std::uint16_t(b + step);
    const float c = ref::bf16_bits_to_float(n);
    const double dc = std::abs(double(c) - r), db = std::abs(double(best) - r);
    if (dc < db || (dc == db && (n & 1) == 0)) best = c;
  }
  return best;
}

}  // namespace

::testing::AssertionResult rounded_once_to_bf16(const char* what, const std::vector<float>& out,
                                                const std::vector<double>& ref, std::int64_t cols) {
  if (out.size() != ref.size())
    return ::testing::AssertionFailure() << what << ": " << out.size() << " elements, expected "
                                         << ref.size();
  std::size_t misses = 0, finite = 0;
  std::int64_t first = -1;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (!std::isfinite(ref[i])) continue;
    ++finite;
    if (out[i] == nearest_bf16(ref[i])) continue;
    if (misses++ == 0) first = std::int64_t(i);
  }
  const std::size_t allowed = 2 + finite / 100;
  static const bool print = std::getenv("LLMK_TEST_PRINT_ERRORS") != nullptr;
  if (print && finite)
    std::printf("  %s: %zu of %zu elements not the nearest bf16 to the reference\n", what, misses,
                finite);
  if (misses <= allowed) return ::testing::AssertionSuccess();
  const std::size_t i = std::size_t(first);
  auto f = ::testing::AssertionFailure();
  f << what << ": " << misses << " of " << finite
    << " elements are not the reference rounded to the nearest bf16 (at most " << allowed
    << " may be, where float32's own error crosses a midpoint): rounded more than once? The first, ";
  if (cols > 0)
    f << "(" << first / cols << ", " << first % cols << ")";
  else
    f << "[" << first << "]";
  f << ", is " << out[i] << ", the nearest bf16 " << nearest_bf16(ref[i]) << ", the reference "
    << ref[i];
  return f;
}

namespace {

std::string element_name(std::int64_t i, std::int64_t cols) {
  if (cols > 0) return "(" + std::to_string(i / cols) + ", " + std::to_string(i % cols) + ")";
  return "[" + std::to_string(i) + "]";
}

}  // namespace

::testing::AssertionResult bf16_within_bounds(const char* what, const std::vector<float>& out,
                                              const std::vector<double>& ref,
                                              const std::vector<double>& bound,
                                              const std::vector<float>& init, bool rounds_once,
                                              std::int64_t cols) {
  if (out.size() != ref.size() || bound.size() != ref.size() ||
      (!init.empty() && init.size() != ref.size()))
    return ::testing::AssertionFailure() << what << ": " << out.size() << " elements, "
                                         << ref.size() << " in the reference, " << bound.size()
                                         << " bounds, " << init.size() << " initial values";
  std::size_t bad = 0, checked = 0, two_right = 0;
  std::int64_t first = -1;
  double lo_first = 0, hi_first = 0;
  double projection = 0, ref_sq = 0, noise = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (!std::isfinite(ref[i]) || !std::isfinite(bound[i])) continue;
    ++checked;
    double lo, hi;
    if (rounds_once) {
      lo = nearest_bf16(ref[i] - bound[i]);
      hi = nearest_bf16(ref[i] + bound[i]);
      two_right += lo != hi;
    } else {
      const double start = init.empty() ? 0.0 : std::abs(double(init[i]));
      const double e = bound[i] + 0x1p-8 * (3 * std::abs(ref[i]) + 2 * start);
      lo = ref[i] - e;
      hi = ref[i] + e;
      projection += (double(out[i]) - ref[i]) * ref[i];
      ref_sq += ref[i] * ref[i];
      noise += ref[i] * ref[i] * e * e / 3;
    }
    if (double(out[i]) >= lo && double(out[i]) <= hi) continue;
    if (bad++ == 0) first = std::int64_t(i), lo_first = lo, hi_first = hi;
  }
  static const bool print = std::getenv("LLMK_TEST_PRINT_ERRORS") != nullptr;
  if (print && checked)
    std::printf("  %s: %zu of %zu elements outside their bounds (%s; %zu with two right values)\n",
                what, bad, checked, rounds_once ? "rounded once" : "up to three roundings",
                two_right);
  if (bad > 0) {
    const std::size_t i = std::size_t(first);
    return ::testing::AssertionFailure()
           << what << ": " << bad << " of " << checked << " elements outside their bounds ("
           << (rounds_once ? "the nearest bf16 to the float64 reference ± float32's error bound"
                           : "three roundings to bf16 of the reference ± float32's error bound")
           << "). The first, " << element_name(first, cols) << ", is " << out[i]
           << ", allowed [" << lo_first << ", " << hi_first << "], the reference " << ref[i];
  }
  if (!rounds_once && ref_sq > 0) {
    const double scale = projection / ref_sq, limit = 6 * std::sqrt(noise) / ref_sq;
    if (print)
      std::printf("  %s: scale error %.3g (limit %.3g)\n", what, scale, limit);
    if (std::abs(scale) > limit)
      return ::testing::AssertionFailure()
             << what << ": a systematic error: the result is the reference scaled by 1 + "
             << scale << " (beyond ±" << limit
             << ", 6 standard deviations of the rounding errors allowed)";
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult bitwise_equal(const char* what, const float* actual,
                                         const float* expected, std::size_t n) {
  const std::int64_t i = llmk::reference::first_bitwise_difference(actual, expected, n);
  if (i < 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << what << " differs: " << llmk::reference::describe_difference(actual, expected, i);
}

::testing::AssertionResult bitwise_equal(const char* what, const std::vector<float>& actual,
                                         const std::vector<float>& expected) {
  if (actual.size() != expected.size()) {
    return ::testing::AssertionFailure()
           << what << ": " << actual.size() << " elements, expected " << expected.size();
  }
  return bitwise_equal(what, actual.data(), expected.data(), actual.size());
}

::testing::AssertionResult bitwise_equal(const char* what, const std::vector<std::int32_t>& actual,
                                         const std::vector<std::int32_t>& expected) {
  if (actual.size() != expected.size()) {
    return ::testing::AssertionFailure()
           << what << ": " << actual.size() << " elements, expected " << expected.size();
  }
  for (std::size_t i = 0; i < actual.size(); ++i)
    if (actual[i] != expected[i])
      return ::testing::AssertionFailure()
             << what << " differs: element " << i << " is " << actual[i] << ", expected "
             << expected[i];
  return ::testing::AssertionSuccess();
}

float guard_nan() {
  const std::uint32_t bits = 0x7fa5a5a5u;  // exponent all ones, quiet bit (22) clear, payload
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

}  // namespace llmk_test
