// The squared norm's declaration: its arguments (one float out, "1") and
// precisions. The entry (core/op/entry.hpp), the contract tests and
// llmk-perf derive theirs from it; op.hpp adds the implementation.
#pragma once

#include <core/op/precision.hpp>
#include <core/op/signature.hpp>
#include <llmk/squared_norm.hpp>

#include <array>
#include <string_view>

namespace llmk::op::squared_norm {

// inp float or bf16; out float in both.
struct Roles {
  static constexpr std::array<const char*, 1> roles{{"inputs"}};
};
using Fp32 = core::op::Fp32All<Roles>;
using Bf16 = core::op::Bf16All<Roles>;  // llm.c's gradients

struct Spec {
  static constexpr const char* name = "llmk::squared_norm";
  using Options = SquaredNormOptions;
  using Precisions = core::op::PrecisionList<Fp32, Bf16>;
  // N values: "rows" are N through a rank-1 view, A·B through a rank-2 one.
  static constexpr std::array<core::op::Arg, 2> args{{
      core::op::float32_out("out", "1"),
      core::op::in("inp", "inputs", "rows"),
  }};
  enum Index : std::size_t { out, inp };
  static constexpr std::size_t leader = inp;
};

}  // namespace llmk::op::squared_norm
