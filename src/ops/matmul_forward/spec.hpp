// The matmul forward's declaration: its arguments and precisions (inp,
// weight and bias share the inputs' type, out and pre_gelu the output's).
// The entry (core/op/entry.hpp), the contract tests and llmk-perf derive
// theirs from it; op.hpp adds the implementations.
#pragma once

#include <core/op/precision.hpp>
#include <core/op/signature.hpp>
#include <llmk/matmul_forward.hpp>

#include <array>
#include <string_view>

namespace llmk::op::matmul_forward {

struct Roles {
  static constexpr const char* inputs = "inputs";  // inp, weight, bias (out and pre_gelu: out)
};
using Fp32 = core::op::Fp32InOut<Roles>;
using Bf16 = core::op::Bf16InOut<Roles>;  // llm.c's training

struct Spec {
  static constexpr const char* name = "llmk::matmul_forward";
  using Options = MatmulForwardOptions;
  using Precisions = core::op::PrecisionList<Fp32, Bf16>;
  static constexpr std::array<core::op::Arg, 5> args{{
      core::op::out("out", "out", "rows OC"),
      core::op::out("pre_gelu", "out", "rows OC").maybe_absent(),  // no GELU
      core::op::in("inp", "inputs", "rows C"),
      core::op::in("weight", "inputs", "OC C"),
      core::op::in("bias", "inputs", "OC").maybe_absent(),
  }};
  enum Index : std::size_t { out, pre_gelu, inp, weight, bias };
  // inp gives the rows and C, weight OC; the outputs are checked against them.
  static constexpr std::size_t leader = inp;
  static constexpr std::array<std::size_t, 5> binding{inp, weight, bias, out, pre_gelu};
};

}  // namespace llmk::op::matmul_forward
