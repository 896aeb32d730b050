// The recompute attention backward as an operation of llmk: what its
// implementation receives (a validated Problem and a Call) and what it
// declares about itself (core/op/impl_traits.hpp).
#pragma once

#include <core/op/call.hpp>
#include <core/op/impl_traits.hpp>
#include <core/op/sequences.hpp>
#include <kernels/attention_backward.hpp>  // attention_scale
#include <kernels/attention_flash.hpp>
#include <llmk/attention_backward.hpp>
#include <ops/attention_backward_recompute/spec.hpp>

namespace llmk::op::attention_backward_recompute {

using Sizes = core::op::SequenceSizes;

// Validated arguments of one precision configuration P: dqkv, dout, qkv,
// out, lse as llm.c's row-major buffers, their sizes and dqkv's update
// (kernels/attention_flash.hpp), chunked by sequence.
template <class ExecSpace, class P = Fp32>
using Problem = core::op::SequenceProblem<
    ExecSpace, P, kernels::FlashAttentionArgs<typename P::in, typename P::dqkv>>;

template <class ExecSpace>
using Call = core::op::Call<ExecSpace, AttentionBackwardOptions>;

struct ImplDefaults : core::op::ImplDefaults {
  template <class P>
  static constexpr bool supports = true;
};

}  // namespace llmk::op::attention_backward_recompute
