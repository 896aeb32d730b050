// The classifier forward's declaration: its precisions (the logits' element
// type; targets int32, losses float in both) and its arguments. The entry
// (core/op/entry.hpp), the contract tests and llmk-perf derive theirs from
// it; op.hpp adds the implementations and V's check.
#pragma once

#include <core/op/precision.hpp>
#include <core/op/signature.hpp>
#include <llmk/classifier_forward.hpp>

#include <array>

namespace llmk::op::classifier_forward {

struct Roles {
  static constexpr std::array<const char*, 1> roles{{"logits"}};
};
using Fp32 = core::op::Fp32All<Roles>;
using Bf16 = core::op::Bf16All<Roles>;  // llm.c's training

struct Spec {
  static constexpr const char* name = "llmk::classifier_forward";
  using Options = ClassifierForwardOptions;
  using Precisions = core::op::PrecisionList<Fp32, Bf16>;
  // Rows of Vp columns (the vocabulary V padded).
  static constexpr std::array<core::op::Arg, 3> args{{
      core::op::float32_out("losses", "rows"),
      core::op::in("logits", "logits", "rows Vp"),
      core::op::int32_in("targets", "rows"),
  }};
  enum Index : std::size_t { losses, logits, targets };
  static constexpr std::size_t leader = logits;
};

}  // namespace llmk::op::classifier_forward
