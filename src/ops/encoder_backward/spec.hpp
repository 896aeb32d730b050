// The encoder backward's declaration: its arguments and precisions (dout's
// element type and each gradient's; tokens are int32 in all; sums are
// float). The entry (core/op/entry.hpp) and the contract tests derive theirs
// from it; op.hpp adds the implementations.
#pragma once

#include <core/op/precision.hpp>
#include <core/op/signature.hpp>
#include <llmk/encoder_backward.hpp>

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

struct Spec {
  static constexpr const char* name = "llmk::encoder_backward";
  using Options = EncoderBackwardOptions;
  using Precisions = core::op::PrecisionList<Fp32, Bf16, Bf16Fp32Grad>;
  // dwte's rows are the vocabulary (V: dwte's own first extent), dwpe's the
  // positions of a sequence.
  static constexpr std::array<core::op::Arg, 4> args{{
      core::op::out("dwte", "dwte", "V C"),
      core::op::out("dwpe", "dwpe", "T C"),
      core::op::in("dout", "dout", "B T C"),
      core::op::int32_in("tokens", "B T"),
  }};
  enum Index : std::size_t { dwte, dwpe, dout, tokens };
  static constexpr std::size_t leader = dout;
};

using Precisions = Spec::Precisions;

}  // namespace llmk::op::encoder_backward
