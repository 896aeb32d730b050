// The AdamW step's declaration: its arguments (params, m, v and master read
// and written in place) and precisions. The entry (core/op/entry.hpp), the
// contract tests and llmk-perf derive theirs from it; op.hpp adds the
// implementation and the hyperparameters' checks.
#pragma once

#include <core/op/precision.hpp>
#include <core/op/signature.hpp>
#include <llmk/adamw.hpp>

#include <array>
#include <string_view>

namespace llmk::op::adamw {

// params and grads of one element type; m, v and master float in both.
struct Roles {
  static constexpr std::array<const char*, 2> roles{{"params", "grads"}};
};
using Fp32 = core::op::Fp32All<Roles>;
using Bf16 = core::op::Bf16All<Roles>;  // llm.c's training, with master weights

struct Spec {
  static constexpr const char* name = "llmk::adamw";
  using Options = AdamWOptions;
  using Precisions = core::op::PrecisionList<Fp32, Bf16>;
  // N parameters: "rows" are N through a rank-1 view, A·B through a rank-2
  // one (a weight matrix as it is).
  static constexpr std::array<core::op::Arg, 5> args{{
      core::op::inout("params", "params", "rows"),
      core::op::in("grads", "grads", "rows"),
      core::op::float32_inout("m", "rows"),
      core::op::float32_inout("v", "rows"),
      core::op::float32_inout("master", "rows").maybe_absent(),
  }};
  enum Index : std::size_t { params, grads, m, v, master };
  static constexpr std::size_t leader = params;
};

}  // namespace llmk::op::adamw
