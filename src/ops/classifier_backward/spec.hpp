// The classifier backward's declaration: its precisions (the element type of
// the logits and of dlogits, one type, as the same buffer may hold both;
// targets are int32, losses and dloss float in both; sums are float) and its
// arguments. The entry (core/op/entry.hpp), the contract tests and llmk-perf
// derive theirs from it; op.hpp adds the implementations and the scalars'
// checks.
#pragma once

#include <core/op/precision.hpp>
#include <core/op/signature.hpp>
#include <llmk/classifier_backward.hpp>

#include <array>
#include <string_view>

namespace llmk::op::classifier_backward {

struct Roles {
  static constexpr std::array<const char*, 2> roles{{"logits", "dlogits"}};
};
using Fp32 = core::op::Fp32All<Roles>;
using Bf16 = core::op::Bf16All<Roles>;  // llm.c's training

struct Spec {
  static constexpr const char* name = "llmk::classifier_backward";
  using Options = ClassifierBackwardOptions;
  using Precisions = core::op::PrecisionList<Fp32, Bf16>;
  // Rows of Vp columns (the vocabulary V padded); dlogits may be the logits'
  // own array (llm.c writes it in place); no losses: not computed; dloss one
  // float for every position (a scalar) or a float per position.
  static constexpr std::array<core::op::Arg, 5> args{{
      core::op::out("dlogits", "dlogits", "rows Vp").may_be("logits"),
      core::op::float32_out("losses", "rows").maybe_absent(),
      core::op::in("logits", "logits", "rows Vp"),
      core::op::int32_in("targets", "rows"),
      core::op::float32_in("dloss", "rows").maybe_absent(),
  }};
  enum Index : std::size_t { dlogits, losses, logits, targets, dloss };
  static constexpr std::size_t leader = logits;
};

using Precisions = Spec::Precisions;

}  // namespace llmk::op::classifier_backward
