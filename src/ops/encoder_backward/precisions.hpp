// The precision configurations of the encoder backward: dout's element type
// and each gradient's (tokens are int32 in all). Sums are float.
#pragma once

#include <core/op/precision.hpp>

#include <array>
#include <string_view>

namespace llmk::op::encoder_backward {

// In the shape of the configurations every operation names alike
// (Fp32Of, ...: inputs, dinp, parameter gradients): dout is the input, it
// has no dinp, dwte and dwpe are its parameters' gradients.
template <class In, class /* no dinp */, class DWte, class DWpe>
struct Precision {
  using in = In;  // dout
  using dwte = DWte;
  using dwpe = DWpe;
  static constexpr std::array<core::op::Role, 3> roles() {
    return {{{"dout", dtype_of<In>()}, {"dwte", dtype_of<DWte>()}, {"dwpe", dtype_of<DWpe>()}}};
  }
};

using Fp32 = core::op::Fp32Of<Precision>;
using Bf16 = core::op::Bf16Of<Precision>;  // llm.c's training
using Bf16Fp32Grad = core::op::Bf16Fp32GradOf<Precision>;

using Precisions = core::op::PrecisionList<Fp32, Bf16, Bf16Fp32Grad>;

}  // namespace llmk::op::encoder_backward
