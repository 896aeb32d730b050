// The precision configurations of the recompute attention backward: the
// element type of its inputs (dout, qkv, out share one) and of dqkv; the
// forward's log-sum-exp is float in all. Sums, and the recomputed tiles
// (P, dP, dS), are float.
#pragma once

#include <core/op/precision.hpp>

#include <array>
#include <string_view>

namespace llmk::op::attention_backward_recompute {

template <class In, class DQkv>
struct Precision {
  using in = In;  // dout, qkv, out
  using dqkv = DQkv;
  // The roles' types, in the order the entry point lists the call's.
  static constexpr std::array<core::op::Role, 3> roles() {
    return {{{"inputs", dtype_of<In>()}, {"lse", DType::f32}, {"dqkv", dtype_of<DQkv>()}}};
  }
};

struct Fp32 : Precision<float, float> {
  static constexpr std::string_view name = "fp32";
};
struct Bf16 : Precision<bf16, bf16> {  // llm.c's training
  static constexpr std::string_view name = "bf16";
};

using Precisions = core::op::PrecisionList<Fp32, Bf16>;

}  // namespace llmk::op::attention_backward_recompute
