// The attention forward's out and lse on a device, for tests of
// attention_backward_recompute at sizes whose float64 forward the host
// cannot afford (test_attention_recompute_huge.cpp: T = 16384). Float math,
// a thread per row (b, h, t), an online softmax over its causal keys in
// order: not llmk's (the library has no forward), only its inputs.
#pragma once

#include <llmk/compat.hpp>
#include <llmk/types.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

namespace llmk_test {

// The widest head this forward takes (its accumulators are registers).
inline constexpr int kForwardMaxHS = 128;

// out (B·T × C, heads side by side) and lse (B·NH·T, float) from qkv
// (B·T × 3C) of element type E.
template <class Space, class E>
void attention_forward(const Space& exec, const E* qkv, E* out, float* lse, std::int64_t B,
                       std::int64_t T, std::int64_t C, std::int64_t NH) {
  const std::int64_t HS = C / NH;
  if (HS > kForwardMaxHS) throw std::invalid_argument("attention_forward: HS above 128");
  const float alpha = float(1.0 / std::sqrt(double(HS)));
  Kokkos::parallel_for(
      "llmk_test::attention_forward",
      Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(exec, 0, B * NH * T),
      KOKKOS_LAMBDA(const std::int64_t r) {
        // Consecutive threads on consecutive positions of one head: they read
        // the same key at the same step.
        const std::int64_t t = r % T, h = r / T % NH, b = r / T / NH;
        const E* const q = qkv + (b * T + t) * 3 * C + h * HS;
        float acc[kForwardMaxHS];
        for (std::int64_t d = 0; d < HS; ++d) acc[d] = 0.0f;
        float most = -1e30f, sum = 0.0f;  // below every logit: the first key sets it
        for (std::int64_t u = 0; u <= t; ++u) {
          const E* const k = qkv + (b * T + u) * 3 * C + C + h * HS;
          const E* const v = k + C;
          float s = 0.0f;
          for (std::int64_t d = 0; d < HS; ++d) s += llmk::to_float(q[d]) * llmk::to_float(k[d]);
          s *= alpha;
          if (s > most) {
            const float scale = llmk::compat::exp(most - s);
            sum *= scale;
            for (std::int64_t d = 0; d < HS; ++d) acc[d] *= scale;
            most = s;
          }
          const float p = llmk::compat::exp(s - most);
          sum += p;
          for (std::int64_t d = 0; d < HS; ++d) acc[d] += p * llmk::to_float(v[d]);
        }
        E* const o = out + (b * T + t) * C + h * HS;
        for (std::int64_t d = 0; d < HS; ++d) o[d] = llmk::from_float<E>(acc[d] / sum);
        lse[r] = most + llmk::compat::log(sum);
      });
}

}  // namespace llmk_test
