// The attention forward's declaration: its arguments and precisions (qkv of
// the inputs' type, out of the outputs'; lse is float in all). The entry
// (core/op/entry.hpp), the contract tests and llmk-perf derive theirs from
// it; op.hpp adds the implementations.
#pragma once

#include <core/op/precision.hpp>
#include <core/op/signature.hpp>
#include <llmk/attention_forward.hpp>

#include <array>
#include <string_view>

namespace llmk::op::attention_forward {

struct Roles {
  static constexpr const char* inputs = "inputs";  // qkv
};
using Fp32 = core::op::Fp32InOut<Roles>;
using Bf16 = core::op::Bf16InOut<Roles>;  // llm.c's training

inline constexpr const char* kOpName = "llmk::attention_forward";

struct Spec {
  static constexpr const char* name = kOpName;
  using Options = AttentionForwardOptions;
  using Precisions = core::op::PrecisionList<Fp32, Bf16>;
  static constexpr std::array<core::op::Arg, 3> args{{
      core::op::out("out", "out", "rows C"),
      // each query row's log-sum-exp per head: it fixes B, NH and T
      core::op::float32_out("lse", "B NH T"),
      core::op::in("qkv", "inputs", "rows 3C"),
  }};
  enum Index : std::size_t { out, lse, qkv };
  static constexpr std::size_t leader = lse;
  // C from qkv's last extent / 3, or out's where qkv's is no multiple of 3
  // (qkv is then the one refused).
  static constexpr std::array<std::size_t, 3> binding{lse, qkv, out};
};

}  // namespace llmk::op::attention_forward
