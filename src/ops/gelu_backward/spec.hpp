// The GELU backward's declaration: its arguments and precisions. The entry
// (core/op/entry.hpp), the contract tests and llmk-perf derive theirs from it;
// op.hpp adds the implementations. The math is float.
#pragma once

#include <core/op/precision.hpp>
#include <core/op/signature.hpp>
#include <llmk/gelu_backward.hpp>

#include <array>
#include <string_view>

namespace llmk::op::gelu_backward {

template <class In, class DInp>
struct Precision {
  using in = In;  // dout, inp
  using dinp = DInp;
  static constexpr std::array<core::op::Role, 2> roles() {
    return {{{"inputs", dtype_of<In>()}, {"dinp", dtype_of<DInp>()}}};
  }
};
struct Fp32 : Precision<float, float> {
  static constexpr std::string_view name = "fp32";
};
struct Bf16 : Precision<bf16, bf16> {  // llm.c's training
  static constexpr std::string_view name = "bf16";
};

struct Spec {
  static constexpr const char* name = "llmk::gelu_backward";
  using Options = GeluBackwardOptions;
  using Precisions = core::op::PrecisionList<Fp32, Bf16>;
  // Elementwise: rows of C only matter to the chunks (the raw entry's N
  // elements are N rows of one).
  static constexpr std::array<core::op::Arg, 3> args{{
      // In place as llm.c's gelu_backward_inplace: dinp may be dout itself.
      core::op::out("dinp", "dinp", "rows C").may_be("dout"),
      core::op::in("dout", "inputs", "rows C"),
      core::op::in("inp", "inputs", "rows C"),
  }};
  enum Index : std::size_t { dinp, dout, inp };
  static constexpr std::size_t leader = dout;
};

using Precisions = Spec::Precisions;

}  // namespace llmk::op::gelu_backward
