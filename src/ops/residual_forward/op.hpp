// The residual forward as the shared framework sees it: an elementwise
// operation (core/op/elementwise.hpp: its problem, "packed" and "naive",
// the limits) of its declaration (spec.hpp) and of the sum in float, one
// rounding into out ("packed" on a GPU is llm.c's residual_forward with
// 16-byte packs of all three arrays). Every element on its own: the same
// bits on every space and thread count.
#pragma once

#include <core/op/elementwise.hpp>
#include <ops/residual_forward/spec.hpp>

namespace llmk::op::residual_forward {

struct Sum {
  static constexpr const char* packed_label = "llmk::residual_forward_packed";
  static constexpr const char* elements_label = "llmk::residual_forward_elements";
  KOKKOS_INLINE_FUNCTION float operator()(const float a, const float b) const { return a + b; }
};

struct Op : core::op::ElementwiseOp<Spec, Sum> {};

}  // namespace llmk::op::residual_forward
