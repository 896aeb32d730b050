#include "support/compare.hpp"

#include <core/reference/bf16.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

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

float guard_nan() {
  const std::uint32_t bits = 0x7fa5a5a5u;  // exponent all ones, quiet bit (22) clear, payload
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

}  // namespace llmk_test
