// The attention backward as an operation of llmk: what every implementation
// receives (a validated Problem and a Call) and what it declares about itself
// (core/op/impl_traits.hpp).
#pragma once

#include <core/op/call.hpp>
#include <core/op/impl_traits.hpp>
#include <core/op/sequences.hpp>
#include <kernels/attention_backward.hpp>
#include <llmk/attention_backward.hpp>
#include <ops/attention_backward/spec.hpp>

namespace llmk::op::attention_backward {

using Sizes = core::op::SequenceSizes;

// Validated arguments of one precision configuration P: dqkv, dout, qkv, att
// as llm.c's row-major buffers, their sizes and dqkv's update
// (kernels/attention_backward.hpp), chunked by sequence.
template <class ExecSpace, class P = Fp32>
using Problem = core::op::SequenceProblem<
    ExecSpace, P, kernels::AttentionArgs<typename P::in, typename P::dqkv>>;

template <class ExecSpace>
using Call = core::op::Call<ExecSpace, AttentionBackwardOptions>;

// Every implementation runs every precision (its kernels are templates on
// the element types).
struct ImplDefaults : core::op::ImplDefaults {
  template <class P>
  static constexpr bool supports = true;
};

}  // namespace llmk::op::attention_backward
