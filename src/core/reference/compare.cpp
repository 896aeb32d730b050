#include <core/reference/compare.hpp>

#include <core/reference/bf16.hpp>

#include <cmath>
#include <cstring>
#include <sstream>

namespace llmk::reference {
namespace {

std::string index_string(std::int64_t i, std::int64_t cols) {
  std::ostringstream s;
  if (cols > 0)
    s << '(' << i / cols << ", " << i % cols << ')';
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

// out matches ref in kind: NaN where ref is NaN, the same infinity, finite where finite.
bool same_kind(double out, double ref) {
  if (std::isnan(ref)) return std::isnan(out);
  if (std::isinf(ref)) return out == ref;
  return std::isfinite(out);
}

template <class Ref>
Comparison compare_impl(const char* what, const float* out, const Ref* ref, std::size_t n,
                        std::int64_t cols, double tolerance) {
  Comparison c;
  c.what = what;
  c.size = n;
  c.tolerance = tolerance;
  double diff2 = 0.0, ref2 = 0.0, worst = -1.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double r = double(ref[i]), o = double(out[i]);
    if (!same_kind(o, r)) {
      if (c.nonfinite_mismatches++ == 0) c.first_mismatch = std::int64_t(i);
      continue;
    }
    if (!std::isfinite(r)) continue;
    const double d = std::abs(o - r);
    diff2 += d * d;
    ref2 += r * r;
    if (d > worst) {
      worst = d;
      c.worst = std::int64_t(i);
      c.worst_out = o;
      c.worst_ref = r;
    }
  }
  c.rel_l2 = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  std::ostringstream msg;
  msg << what << ": ";
  if (c.nonfinite_mismatches != 0) {
    c.ok = false;
    const std::size_t i = std::size_t(c.first_mismatch);
    msg << c.nonfinite_mismatches << " of " << n
        << " elements are not NaN, infinite or finite where the reference is; the first "
        << index_string(c.first_mismatch, cols) << " = " << out[i] << ", reference "
        << double(ref[i]);
    c.message = msg.str();
    return c;
  }
  c.ok = c.rel_l2 <= tolerance;
  msg << "relative L2 error " << c.rel_l2 << (c.ok ? " <= " : " > ") << "tolerance " << tolerance;
  if (c.worst >= 0)
    msg << "; worst element " << index_string(c.worst, cols) << " = " << c.worst_out
        << ", reference " << c.worst_ref;
  c.message = msg.str();
  return c;
}

template <class Ref>
Comparison compare_vectors(const char* what, const std::vector<float>& out,
                           const std::vector<Ref>& ref, std::int64_t cols, double tolerance) {
  if (out.size() != ref.size()) {
    Comparison c;
    c.ok = false;
    c.what = what;
    c.tolerance = tolerance;
    c.message = std::string(what) + ": " + std::to_string(out.size()) + " elements, expected " +
                std::to_string(ref.size());
    return c;
  }
  return compare_impl(what, out.data(), ref.data(), out.size(), cols, tolerance);
}

}  // namespace

Comparison compare(const char* what, const float* out, const double* ref, std::size_t n,
                   std::int64_t cols, double tolerance) {
  return compare_impl(what, out, ref, n, cols, tolerance);
}

Comparison compare(const char* what, const float* out, const float* ref, std::size_t n,
                   std::int64_t cols, double tolerance) {
  return compare_impl(what, out, ref, n, cols, tolerance);
}

Comparison compare(const char* what, const std::vector<float>& out, const std::vector<double>& ref,
                   std::int64_t cols, double tolerance) {
  return compare_vectors(what, out, ref, cols, tolerance);
}

Comparison compare(const char* what, const std::vector<float>& out, const std::vector<float>& ref,
                   std::int64_t cols, double tolerance) {
  return compare_vectors(what, out, ref, cols, tolerance);
}

Comparison compare_bf16(const char* what, const std::uint16_t* out, const double* ref,
                        std::size_t n, std::int64_t cols, double tolerance) {
  const std::vector<float> wide = widen_bf16(out, n);
  return compare_impl(what, wide.data(), ref, n, cols, tolerance);
}

Comparison compare_bf16(const char* what, const std::uint16_t* out, const float* ref,
                        std::size_t n, std::int64_t cols, double tolerance) {
  const std::vector<float> wide = widen_bf16(out, n);
  return compare_impl(what, wide.data(), ref, n, cols, tolerance);
}

std::int64_t first_bitwise_difference(const float* a, const float* b, std::size_t n) {
  if (n == 0 || std::memcmp(a, b, n * sizeof(float)) == 0) return -1;
  for (std::size_t i = 0; i < n; ++i)
    if (std::memcmp(a + i, b + i, sizeof(float)) != 0) return std::int64_t(i);
  return -1;
}

std::string describe_difference(const float* actual, const float* expected, std::int64_t i) {
  std::ostringstream s;
  s << "element " << i << " is " << actual[i] << " (bits " << bits_string(actual[i])
    << "), expected " << expected[i] << " (bits " << bits_string(expected[i]) << ")";
  return s.str();
}

}  // namespace llmk::reference
