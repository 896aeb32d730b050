// The precision configurations of the matmul backward: the element types of
// its inputs (dout, inp, weight, pre_gelu share one) and of each gradient.
// Accumulation is float in every configuration. An implementation states the
// ones it runs (ImplDefaults::supports<P>); the list below is the one place
// they are named, and the entry points, tests and perf table walk it.
#pragma once

#include <core/op/precision.hpp>

#include <array>
#include <string_view>

namespace llmk::op::matmul_backward {

template <class In, class DInp, class DWeight, class DBias>
struct Precision {
  using in = In;  // dout, inp, weight, pre_gelu
  using dinp = DInp;
  using dweight = DWeight;
  using dbias = DBias;
  // The roles' types, in the order the entry point lists the call's.
  static constexpr std::array<core::op::Role, 4> roles() {
    return {{{"inputs", dtype_of<In>()},
             {"dinp", dtype_of<DInp>()},
             {"dweight", dtype_of<DWeight>()},
             {"dbias", dtype_of<DBias>()}}};
  }
};

using Fp32 = core::op::Fp32Of<Precision>;
using Bf16 = core::op::Bf16Of<Precision>;  // llm.c's training
using Bf16Fp32Grad = core::op::Bf16Fp32GradOf<Precision>;

using core::op::for_each_precision;
using core::op::PrecisionTag;
using Precisions = core::op::PrecisionList<Fp32, Bf16, Bf16Fp32Grad>;

}  // namespace llmk::op::matmul_backward
