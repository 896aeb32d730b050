// The encoder forward's declaration: its arguments and precisions (the
// embeddings' element type and out's; tokens are int32 in all; sums are
// float). The entry (core/op/entry.hpp), the contract tests and llmk-perf
// derive theirs from it; op.hpp adds the implementations.
#pragma once

#include <core/op/precision.hpp>
#include <core/op/signature.hpp>
#include <llmk/encoder_forward.hpp>

#include <array>
#include <string_view>

namespace llmk::op::encoder_forward {

struct Roles {
  static constexpr const char* inputs = "param";  // wte, wpe
};
using Fp32 = core::op::Fp32InOut<Roles>;
using Bf16 = core::op::Bf16InOut<Roles>;  // llm.c's training

struct Spec {
  static constexpr const char* name = "llmk::encoder_forward";
  using Options = EncoderForwardOptions;
  using Precisions = core::op::PrecisionList<Fp32, Bf16>;
  // wte's rows are the vocabulary (V: its own first extent), wpe's the
  // positions of a sequence.
  static constexpr std::array<core::op::Arg, 4> args{{
      core::op::out("out", "out", "B T C"),
      core::op::int32_in("tokens", "B T"),
      core::op::in("wte", "param", "V C"),
      core::op::in("wpe", "param", "T C"),
  }};
  enum Index : std::size_t { out, tokens, wte, wpe };
  static constexpr std::size_t leader = out;
};

}  // namespace llmk::op::encoder_forward
