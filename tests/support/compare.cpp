#include "support/compare.hpp"

#include <cstring>

namespace llmk_test {
namespace {

::testing::AssertionResult to_assertion(const llmk::reference::Comparison& c) {
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
