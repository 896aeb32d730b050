// The GELU forward's declaration: its arguments and precisions. The entry
// (core/op/entry.hpp), the contract tests and llmk-perf derive theirs from it;
// op.hpp adds the implementations. The math is float.
#pragma once

#include <core/op/precision.hpp>
#include <core/op/signature.hpp>
#include <llmk/gelu_forward.hpp>

#include <array>
#include <string_view>

namespace llmk::op::gelu_forward {

struct Roles {
  static constexpr const char* inputs = "inp";
};
using Fp32 = core::op::Fp32InOut<Roles>;
using Bf16 = core::op::Bf16InOut<Roles>;  // llm.c's training

struct Spec {
  static constexpr const char* name = "llmk::gelu_forward";
  using Options = GeluForwardOptions;
  using Precisions = core::op::PrecisionList<Fp32, Bf16>;
  // Elementwise: rows of C only matter to the chunks (the raw entry's N
  // elements are N rows of one).
  static constexpr std::array<core::op::Arg, 2> args{{
      core::op::out("out", "out", "rows C").may_be("inp"),  // GELU in place
      core::op::in("inp", "inp", "rows C"),
  }};
  enum Index : std::size_t { out, inp };
  static constexpr std::size_t leader = inp;
};

}  // namespace llmk::op::gelu_forward
