// GPT-2's GELU, the tanh approximation, and its derivative
//   gelu(x) = ½·x·(1 + tanh(s·(x + 0.044715·x³))),  s = √(2/π),
//   gelu'(x) = ½·(1 + t) + ½·x·(1 − t²)·s·(1 + 3·0.044715·x²),  t = tanh(s·(x + 0.044715·x³)),
// in float, for host and device code. (The float64 reference in
// ops/matmul_backward/reference/ is written separately.)
#pragma once

#include <kernels/fast_math.hpp>

namespace llmk::kernels {

KOKKOS_INLINE_FUNCTION float gelu(const float x) {
  constexpr float s = 0.7978845608028654f;  // √(2/π)
  constexpr float a = 0.044715f;
  return 0.5f * x * (1.0f + fast_tanh(s * (x + a * x * x * x)));
}

KOKKOS_INLINE_FUNCTION float gelu_grad(const float x) {
  constexpr float s = 0.7978845608028654f;  // √(2/π)
  constexpr float a = 0.044715f;
  const float x2 = x * x;
  const float t = fast_tanh(s * (x + a * x2 * x));
  return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * s * (1.0f + 3.0f * a * x2);
}

}  // namespace llmk::kernels
