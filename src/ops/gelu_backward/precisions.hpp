// The precision configurations of the GELU backward: the element type of its
// inputs (dout and inp share one) and of dinp. The math is float.
#pragma once

#include <core/op/precision.hpp>

#include <array>
#include <string_view>

namespace llmk::op::gelu_backward {

template <class In, class DInp>
struct Precision {
  using in = In;  // dout, inp
  using dinp = DInp;
  // The roles' types, in the order the entry point lists the call's.
  static constexpr std::array<core::op::Role, 2> roles() {
    return {{{"inputs", dtype_of<In>()}, {"dinp", dtype_of<DInp>()}}};
  }
};

struct Fp32 : Precision<float, float> {
  static constexpr std::string_view name = "fp32";
};
struct Bf16 : Precision<bf16, bf16> {  // llm.c's training
  static constexpr std::string_view name = "bf16";
};

using Precisions = core::op::PrecisionList<Fp32, Bf16>;

}  // namespace llmk::op::gelu_backward
