// Reproducible random values for the reference libraries' problems
// (llmk_reference). Plain C++17 (no llmk, no Kokkos).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace llmk::reference {

// Uniform in [-1, 1) and never 0, from std::mt19937 (whose sequence the C++
// standard fixes; no std::*_distribution, whose output is not), so a seed gives
// the same values on every platform.
void fill_random(std::vector<float>& values, std::uint32_t seed);
void fill_random(float* values, std::size_t count, std::uint32_t seed);

}  // namespace llmk::reference
