// The precision configurations of the layer-norm backward: the element type
// of its inputs (dout, inp, weight share one) and of each gradient; the
// forward's statistics (mean, rstd) are float in all. Sums are float.
#pragma once

#include <core/op/precision.hpp>

#include <array>
#include <string_view>

namespace llmk::op::layernorm_backward {

template <class In, class DInp, class DWeight, class DBias>
struct Precision {
  using in = In;  // dout, inp, weight
  using dinp = DInp;
  using dweight = DWeight;
  using dbias = DBias;
  // The roles' types, in the order the entry point lists the call's.
  static constexpr std::array<core::op::Role, 5> roles() {
    return {{{"inputs", dtype_of<In>()},
             {"dinp", dtype_of<DInp>()},
             {"dweight", dtype_of<DWeight>()},
             {"dbias", dtype_of<DBias>()},
             {"mean and rstd", DType::f32}}};
  }
};

struct Fp32 : Precision<float, float, float, float> {
  static constexpr std::string_view name = "fp32";
};
// llm.c's training: activations, weights and gradients bf16.
struct Bf16 : Precision<bf16, bf16, bf16, bf16> {
  static constexpr std::string_view name = "bf16";
};
// Mixed precision with float32 parameter gradients.
struct Bf16Fp32Grad : Precision<bf16, bf16, float, float> {
  static constexpr std::string_view name = "bf16-fp32grad";
};

using Precisions = core::op::PrecisionList<Fp32, Bf16, Bf16Fp32Grad>;

}  // namespace llmk::op::layernorm_backward
