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

using Fp32 = core::op::Fp32Of<Precision>;
using Bf16 = core::op::Bf16Of<Precision>;  // llm.c's training
using Bf16Fp32Grad = core::op::Bf16Fp32GradOf<Precision>;

using Precisions = core::op::PrecisionList<Fp32, Bf16, Bf16Fp32Grad>;

}  // namespace llmk::op::layernorm_backward
