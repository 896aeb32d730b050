// The layer-norm forward's declaration: its arguments and precisions (inp,
// weight and bias share the inputs' type; mean and rstd are float in all).
// The entry (core/op/entry.hpp), the contract tests and llmk-perf derive
// theirs from it; op.hpp adds the implementations.
#pragma once

#include <core/op/precision.hpp>
#include <core/op/signature.hpp>
#include <llmk/layernorm_forward.hpp>

#include <array>
#include <string_view>

namespace llmk::op::layernorm_forward {

struct Roles {
  static constexpr const char* inputs = "inputs";  // inp, weight, bias
};
using Fp32 = core::op::Fp32InOut<Roles>;
using Bf16 = core::op::Bf16InOut<Roles>;  // llm.c's training

struct Spec {
  static constexpr const char* name = "llmk::layernorm_forward";
  using Options = LayernormForwardOptions;
  using Precisions = core::op::PrecisionList<Fp32, Bf16>;
  static constexpr std::array<core::op::Arg, 6> args{{
      core::op::out("out", "out", "rows C"),
      core::op::float32_out("mean", "rows"),
      core::op::float32_out("rstd", "rows"),
      core::op::in("inp", "inputs", "rows C"),
      core::op::in("weight", "inputs", "C"),
      core::op::in("bias", "inputs", "C").maybe_absent(),
  }};
  enum Index : std::size_t { out, mean, rstd, inp, weight, bias };
  static constexpr std::size_t leader = inp;
};

}  // namespace llmk::op::layernorm_forward
