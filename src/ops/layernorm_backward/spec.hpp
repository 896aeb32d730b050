// The layer-norm backward's declaration: its arguments and precisions (the
// element type of its inputs, which dout, inp and weight share, and of each
// gradient; the forward's statistics, mean and rstd, are float in all; sums
// are float). The entry (core/op/entry.hpp) and the contract tests derive
// theirs from it; op.hpp adds the implementations.
#pragma once

#include <core/op/precision.hpp>
#include <core/op/signature.hpp>
#include <llmk/layernorm_backward.hpp>

#include <array>
#include <string_view>

namespace llmk::op::layernorm_backward {

template <class In, class DInp, class DWeight, class DBias>
struct Precision {
  using in = In;  // dout, inp, weight
  using dinp = DInp;
  using dweight = DWeight;
  using dbias = DBias;
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

struct Spec {
  static constexpr const char* name = "llmk::layernorm_backward";
  using Options = LayernormBackwardOptions;
  using Precisions = core::op::PrecisionList<Fp32, Bf16, Bf16Fp32Grad>;
  static constexpr std::array<core::op::Arg, 8> args{{
      core::op::out("dinp", "dinp", "rows C"),
      core::op::out("dweight", "dweight", "C"),
      core::op::out("dbias", "dbias", "C").maybe_absent(),
      core::op::in("dout", "inputs", "rows C"),
      core::op::in("inp", "inputs", "rows C"),
      core::op::in("weight", "inputs", "C"),
      core::op::in("mean", "mean and rstd", "rows"),
      core::op::in("rstd", "mean and rstd", "rows"),
  }};
  enum Index : std::size_t { dinp, dweight, dbias, dout, inp, weight, mean, rstd };
  static constexpr std::size_t leader = dout;
};

using Precisions = Spec::Precisions;

}  // namespace llmk::op::layernorm_backward
