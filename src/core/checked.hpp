// Size arithmetic that cannot overflow silently: element counts of a call's
// arrays are products of user-given sizes (B·T·C, B·T·OC, OC·C), and a
// wrapped product would size a view wrongly and crash or write out of bounds.
#pragma once

#include <llmk/types.hpp>

#include <limits>
#include <stdexcept>
#include <string>

namespace llmk::core {

// Largest element count of a float array whose byte size fits a signed 64-bit
// offset (what Kokkos and pointer arithmetic need).
inline constexpr index_t kMaxElements = std::numeric_limits<index_t>::max() / 8;

// a·b for a, b ≥ 0, or std::invalid_argument naming `what` if it exceeds
// kMaxElements.
inline index_t checked_product(index_t a, index_t b, const char* op, const std::string& what) {
  if (a != 0 && b > kMaxElements / a)
    throw std::invalid_argument(std::string(op) + ": " + what + " = " + std::to_string(a) +
                                " · " + std::to_string(b) +
                                " overflows: at most 2^60 elements are supported");
  return a * b;
}

inline constexpr index_t kInt32Max = std::numeric_limits<int>::max();
inline constexpr index_t kNoLimit = std::numeric_limits<index_t>::max();

}  // namespace llmk::core
