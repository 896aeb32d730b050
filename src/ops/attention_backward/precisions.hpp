// The precision configurations of the attention backward: the element type
// of its inputs (dout, qkv, att share one) and of dqkv. Sums are float, and
// so are the T × T intermediates (datt, dpreatt) in every configuration.
#pragma once

#include <core/op/precision.hpp>

#include <array>
#include <string_view>

namespace llmk::op::attention_backward {

template <class In, class DQkv>
struct Precision {
  using in = In;  // dout, qkv, att
  using dqkv = DQkv;
  // The roles' types, in the order the entry point lists the call's.
  static constexpr std::array<core::op::Role, 2> roles() {
    return {{{"inputs", dtype_of<In>()}, {"dqkv", dtype_of<DQkv>()}}};
  }
};

struct Fp32 : Precision<float, float> {
  static constexpr std::string_view name = "fp32";
};
struct Bf16 : Precision<bf16, bf16> {  // llm.c's training
  static constexpr std::string_view name = "bf16";
};

using Precisions = core::op::PrecisionList<Fp32, Bf16>;

}  // namespace llmk::op::attention_backward
