// The attention forward as an operation of llmk: what its implementations
// receive (a validated Problem and a Call) and what they declare about
// themselves (core/op/impl_traits.hpp).
#pragma once

#include <core/op/call.hpp>
#include <core/op/impl_traits.hpp>
#include <core/op/sequences.hpp>
#include <kernels/attention_flash.hpp>  // FlashAttentionArgs
#include <llmk/attention_forward.hpp>
#include <ops/attention_forward/spec.hpp>

namespace llmk::op::attention_forward {

using Sizes = core::op::SequenceSizes;

// One call's arrays as raw row-major pointers (llm.c's layout): qkv
// (B·T) × 3C, out (B·T) × C, lse B·NH·T floats, row (b, h, t) at
// (b·NH + h)·T + t.
template <class TIn, class TOut>
struct Args {
  TOut* out = nullptr;
  float* lse = nullptr;
  const TIn* qkv = nullptr;
  index_t B = 0, T = 0, C = 0, NH = 1;
  float alpha = 1.0f;     // 1/√HS (kernels::attention_scale)
  bool overwrite = true;  // out = (else +=)

  index_t HS() const { return C / NH; }
  // What the backward's tiles read of a call (FlashCommon): qkv and the sizes.
  kernels::FlashAttentionArgs<TIn, TOut> common() const {
    kernels::FlashAttentionArgs<TIn, TOut> c;
    c.qkv = qkv;
    c.B = B, c.T = T, c.C = C, c.NH = NH;
    c.alpha = alpha;
    return c;
  }
  // Sequences [b0, b0 + count): every array's part of them.
  Args sequences(const index_t b0, const index_t count) const {
    Args a = *this;
    a.out += b0 * T * C;
    a.qkv += b0 * T * 3 * C;
    a.lse += b0 * NH * T;
    a.B = count;
    return a;
  }
};

// Validated arguments of one precision configuration P, chunked by sequence.
template <class ExecSpace, class P = Fp32>
using Problem = core::op::SequenceProblem<ExecSpace, P, Args<typename P::in, typename P::out>>;

template <class ExecSpace>
using Call = core::op::Call<ExecSpace, AttentionForwardOptions>;

using ImplDefaults = core::op::AnyPrecisionNoWorkspace;

}  // namespace llmk::op::attention_forward
