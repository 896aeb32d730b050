// The recompute attention backward's declaration: its arguments and
// precisions (the element type of its inputs, dout, qkv and out sharing one,
// and of dqkv; the forward's log-sum-exp is float in all). The entry
// (core/op/entry.hpp), the contract tests and llmk-perf derive theirs from
// it; op.hpp adds the implementations. Sums, and the recomputed tiles (P, dP,
// dS), are float.
#pragma once

#include <core/op/precision.hpp>
#include <core/op/signature.hpp>
#include <llmk/attention_backward.hpp>

#include <array>
#include <string_view>

namespace llmk::op::attention_backward_recompute {

template <class In, class DQkv>
struct Precision {
  using in = In;  // dout, qkv, out
  using dqkv = DQkv;
  static constexpr std::array<core::op::Role, 3> roles() {
    return {{{"inputs", dtype_of<In>()}, {"lse", DType::f32}, {"dqkv", dtype_of<DQkv>()}}};
  }
};
struct Fp32 : Precision<float, float> {
  static constexpr std::string_view name = "fp32";
};
struct Bf16 : Precision<bf16, bf16> {  // llm.c's training
  static constexpr std::string_view name = "bf16";
};

inline constexpr const char* kOpName = "llmk::attention_backward_recompute";

struct Spec {
  static constexpr const char* name = kOpName;
  using Options = AttentionBackwardOptions;
  using Precisions = core::op::PrecisionList<Fp32, Bf16>;
  static constexpr std::array<core::op::Arg, 5> args{{
      core::op::out("dqkv", "dqkv", "rows 3C"),
      core::op::in("dout", "inputs", "rows C"),
      core::op::in("qkv", "inputs", "rows 3C"),
      core::op::in("out", "inputs", "rows C"),  // the forward's output
      // the forward's log-sum-exp per query row and head: it fixes B, NH and T
      core::op::in("lse", "lse", "B NH T"),
  }};
  enum Index : std::size_t { dqkv, dout, qkv, out, lse };
  static constexpr std::size_t leader = lse;
  // C from qkv's last extent / 3, or dout's where qkv's is no multiple of 3
  // (qkv is then the one refused).
  static constexpr std::array<std::size_t, 5> binding{lse, qkv, dout, out, dqkv};
};

using Precisions = Spec::Precisions;

}  // namespace llmk::op::attention_backward_recompute
