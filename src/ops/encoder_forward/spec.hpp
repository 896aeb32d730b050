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

template <class In, class Out>
struct Precision {
  using in = In;  // wte, wpe
  using out = Out;
  static constexpr std::array<core::op::Role, 2> roles() {
    return {{{"param", dtype_of<In>()}, {"out", dtype_of<Out>()}}};
  }
};
struct Fp32 : Precision<float, float> {
  static constexpr std::string_view name = "fp32";
};
struct Bf16 : Precision<bf16, bf16> {  // llm.c's training
  static constexpr std::string_view name = "bf16";
};

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
