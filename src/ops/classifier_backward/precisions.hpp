// The precision configurations of the classifier backward: the element type
// of the logits and of dlogits (one type, as the same buffer may hold both);
// targets are int32, losses and dloss float in both. Sums are float.
#pragma once

#include <core/op/precision.hpp>

#include <array>
#include <string_view>

namespace llmk::op::classifier_backward {

template <class T>
struct Precision {
  using in = T;  // logits, and dlogits
  // The roles' types, in the order the entry point lists the call's.
  // (losses and dloss are float in both: the entry checks them by name.)
  static constexpr std::array<core::op::Role, 2> roles() {
    return {{{"logits", dtype_of<T>()}, {"dlogits", dtype_of<T>()}}};
  }
};

struct Fp32 : Precision<float> {
  static constexpr std::string_view name = "fp32";
};
struct Bf16 : Precision<bf16> {  // llm.c's training
  static constexpr std::string_view name = "bf16";
};

using Precisions = core::op::PrecisionList<Fp32, Bf16>;

}  // namespace llmk::op::classifier_backward
