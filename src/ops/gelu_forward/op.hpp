// The GELU forward as the shared framework sees it: an elementwise operation
// (core/op/elementwise.hpp: its problem, "packed" and "naive", the limits)
// of its declaration (spec.hpp) and of GELU in float (kernels/gelu.hpp),
// one rounding into out. Every element on its own: the same bits on every
// space and thread count.
#pragma once

#include <core/op/elementwise.hpp>
#include <kernels/gelu.hpp>
#include <ops/gelu_forward/spec.hpp>

namespace llmk::op::gelu_forward {

struct Gelu {
  static constexpr const char* packed_label = "llmk::gelu_forward_packed";
  static constexpr const char* elements_label = "llmk::gelu_forward_elements";
  KOKKOS_INLINE_FUNCTION float operator()(const float x) const { return kernels::gelu(x); }
};

struct Op : core::op::ElementwiseOp<Spec, Gelu> {};

}  // namespace llmk::op::gelu_forward
