// The attention backward's declaration: its arguments and precisions (the
// element type of its inputs, dout, qkv and att sharing one, and of dqkv).
// The entry (core/op/entry.hpp), the contract tests and llmk-perf derive
// theirs from it; op.hpp adds the implementations. Sums are float, and so
// are the T × T intermediates (datt, dpreatt) in every precision.
#pragma once

#include <core/op/precision.hpp>
#include <core/op/signature.hpp>
#include <llmk/attention_backward.hpp>

#include <array>
#include <string_view>

namespace llmk::op::attention_backward {

template <class In, class DQkv>
struct Precision {
  using in = In;  // dout, qkv, att
  using dqkv = DQkv;
  static constexpr std::array<core::op::Role, 2> roles() {
    return {{{"inputs", dtype_of<In>()}, {"dqkv", dtype_of<DQkv>()}}};
  }
};
struct Fp32 : Precision<float, float> {
  static constexpr std::string_view name = "fp32";
};
struct Bf16 : Precision<bf16, bf16> {  // llm.c's training
  static constexpr std::string_view name = "bf16";
};

inline constexpr const char* kOpName = "llmk::attention_backward";

struct Spec {
  static constexpr const char* name = kOpName;
  using Options = AttentionBackwardOptions;
  using Precisions = core::op::PrecisionList<Fp32, Bf16>;
  static constexpr std::array<core::op::Arg, 4> args{{
      core::op::out("dqkv", "dqkv", "rows 3C"),
      core::op::in("dout", "inputs", "rows C"),
      core::op::in("qkv", "inputs", "rows 3C"),
      // softmax(q·kᵀ) per head, a T × T matrix each: it fixes B, NH and T
      core::op::in("att", "inputs", "B NH T T"),
  }};
  enum Index : std::size_t { dqkv, dout, qkv, att };
  static constexpr std::size_t leader = att;
  // C from qkv's last extent / 3, or dout's where qkv's is no multiple of 3
  // (qkv is then the one refused).
  static constexpr std::array<std::size_t, 4> binding{att, qkv, dout, dqkv};
};

using Precisions = Spec::Precisions;

}  // namespace llmk::op::attention_backward
