#include <core/reference/random.hpp>

#include <random>

namespace llmk::reference {

void fill_random(float* values, std::size_t count, std::uint32_t seed) {
  std::mt19937 rng(seed);
  for (std::size_t i = 0; i < count; ++i) {
    float v;
    do {
      // 24 random bits → a float in [0, 1) exactly, then [-1, 1).
      v = float(rng() >> 8) * (1.0f / 16777216.0f) * 2.0f - 1.0f;
    } while (v == 0.0f);
    values[i] = v;
  }
}

void fill_random(std::vector<float>& values, std::uint32_t seed) {
  fill_random(values.data(), values.size(), seed);
}

}  // namespace llmk::reference
