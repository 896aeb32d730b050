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

// params of one element type (in), grads of one (grad); m, v and master
// float in all.
template <class Param, class Grad>
struct Precision {
  using in = Param;
  using grad = Grad;
  static constexpr std::array<core::op::Role, 2> roles() {
    return {{{"params", dtype_of<Param>()}, {"grads", dtype_of<Grad>()}}};
  }
};
struct Fp32 : Precision<float, float> {
  static constexpr std::string_view name = "fp32";
};
struct Bf16 : Precision<bf16, bf16> {  // llm.c's training, with master weights
  static constexpr std::string_view name = "bf16";
};
// bf16 parameters, float gradients: what GPT-2's backward in llmk's
// "bf16-fp32grad" (matmul, layer norm) leaves for the optimizer.
struct Bf16Fp32Grad : Precision<bf16, float> {
  static constexpr std::string_view name = "bf16-fp32grad";
};

struct Spec {
  static constexpr const char* name = "llmk::adamw";
  using Options = AdamWOptions;
  using Precisions = core::op::PrecisionList<Fp32, Bf16, Bf16Fp32Grad>;
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
