// The residual forward's declaration: its arguments and precisions. The
// entry (core/op/entry.hpp), the contract tests and llmk-perf derive theirs
// from it; op.hpp adds the implementations. The sum is float.
#pragma once

#include <core/op/precision.hpp>
#include <core/op/signature.hpp>
#include <llmk/residual_forward.hpp>

#include <array>

namespace llmk::op::residual_forward {

struct Roles {
  static constexpr const char* inputs = "inputs";  // inp1, inp2
};
using Fp32 = core::op::Fp32InOut<Roles>;
using Bf16 = core::op::Bf16InOut<Roles>;  // llm.c's training

struct Spec {
  static constexpr const char* name = "llmk::residual_forward";
  using Options = ResidualForwardOptions;
  using Precisions = core::op::PrecisionList<Fp32, Bf16>;
  // Elementwise: rows of C only matter to the chunks (the raw entry's N
  // elements are N rows of one).
  static constexpr std::array<core::op::Arg, 3> args{{
      core::op::out("out", "out", "rows C").may_be("inp1"),  // the residual stream in place
      core::op::in("inp1", "inputs", "rows C"),
      core::op::in("inp2", "inputs", "rows C"),
  }};
  enum Index : std::size_t { out, inp1, inp2 };
  static constexpr std::size_t leader = inp1;
};

}  // namespace llmk::op::residual_forward
