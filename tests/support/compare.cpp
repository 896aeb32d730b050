#include "support/compare.hpp"

#include <cmath>
#include <cstring>
#include <sstream>

namespace llmk_test {
namespace {

std::string index_string(std::size_t i, std::int64_t cols) {
  std::ostringstream s;
  if (cols > 0)
    s << '(' << std::int64_t(i) / cols << ", " << std::int64_t(i) % cols << ')';
  else
    s << '[' << i << ']';
  return s.str();
}

std::string bits_string(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  std::ostringstream s;
  s << "0x" << std::hex << bits;
  return s.str();
}

template <class Ref>
::testing::AssertionResult compare(const char* what, const std::vector<float>& out,
                                   const std::vector<Ref>& ref, std::int64_t cols,
                                   double tolerance) {
  if (out.size() != ref.size()) {
    return ::testing::AssertionFailure()
           << what << ": " << out.size() << " elements, expected " << ref.size();
  }
  double diff2 = 0.0, ref2 = 0.0, worst = -1.0;
  std::size_t worst_i = 0, bad = 0, first_bad = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const double r = double(ref[i]), o = double(out[i]);
    const bool ok = std::isnan(r) ? std::isnan(o) : std::isfinite(r) == std::isfinite(o);
    if (!ok) {
      if (bad++ == 0) first_bad = i;
      continue;
    }
    if (!std::isfinite(r)) continue;
    const double d = std::abs(o - r);
    diff2 += d * d;
    ref2 += r * r;
    if (d > worst) worst = d, worst_i = i;
  }
  if (bad != 0) {
    return ::testing::AssertionFailure()
           << what << ": " << bad << " of " << out.size()
           << " elements are non-finite where the reference is finite or the reverse; the first "
           << index_string(first_bad, cols) << " = " << out[first_bad] << ", reference "
           << double(ref[first_bad]);
  }
  const double rel = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  if (!(rel <= tolerance)) {
    return ::testing::AssertionFailure()
           << what << ": relative L2 error " << rel << " > tolerance " << tolerance
           << "; worst element " << index_string(worst_i, cols) << " = " << out[worst_i]
           << ", reference " << double(ref[worst_i]);
  }
  return ::testing::AssertionSuccess() << what << ": relative L2 error " << rel;
}

}  // namespace

::testing::AssertionResult matches_reference(const char* what, const std::vector<float>& out,
                                             const std::vector<double>& ref, std::int64_t cols,
                                             double tolerance) {
  return compare(what, out, ref, cols, tolerance);
}

::testing::AssertionResult matches_reference(const char* what, const std::vector<float>& out,
                                             const std::vector<float>& ref, std::int64_t cols,
                                             double tolerance) {
  return compare(what, out, ref, cols, tolerance);
}

::testing::AssertionResult bitwise_equal(const char* what, const std::vector<float>& actual,
                                         const std::vector<float>& expected) {
  if (actual.size() != expected.size()) {
    return ::testing::AssertionFailure()
           << what << ": " << actual.size() << " elements, expected " << expected.size();
  }
  for (std::size_t i = 0; i < actual.size(); ++i) {
    if (std::memcmp(&actual[i], &expected[i], sizeof(float)) != 0) {
      return ::testing::AssertionFailure()
             << what << " changed: element " << i << " is " << actual[i] << " (bits "
             << bits_string(actual[i]) << "), was " << expected[i] << " (bits "
             << bits_string(expected[i]) << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

float guard_nan() {
  const std::uint32_t bits = 0x7fa5a5a5u;  // exponent all ones, quiet bit (22) clear, payload
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

}  // namespace llmk_test
