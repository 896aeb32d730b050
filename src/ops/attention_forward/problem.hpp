// The attention forward as an operation of llmk: what its implementations
// receive (a validated Problem and a Call) and what they declare about
// themselves (core/op/impl_traits.hpp).
#pragma once

#include <core/op/call.hpp>
#include <core/op/impl_traits.hpp>
#include <kernels/attention_flash.hpp>  // FlashAttentionArgs
#include <llmk/attention_forward.hpp>
#include <ops/attention_forward/spec.hpp>

namespace llmk::op::attention_forward {

// The sizes of a call; M is B, the batch of sequences (the framework's
// chunks are whole sequences).
struct Sizes {
  index_t M = 0, T = 0, C = 0, NH = 1;
};

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
};

template <class ExecSpace, class P = Fp32>
struct Problem {
  using precision = P;
  Args<typename P::in, typename P::out> args;
  index_t M = 0;  // = args.B

  Sizes sizes() const { return {args.B, args.T, args.C, args.NH}; }

  // Sequences [b0, b0 + count): every array's part of them.
  Problem rows(index_t b0, index_t count) const {
    Problem p = *this;
    p.args.out += b0 * args.T * args.C;
    p.args.qkv += b0 * args.T * 3 * args.C;
    p.args.lse += b0 * args.NH * args.T;
    p.args.B = p.M = count;
    return p;
  }
};

template <class ExecSpace>
using Call = core::op::Call<ExecSpace, AttentionForwardOptions>;

using ImplDefaults = core::op::AnyPrecisionNoWorkspace;

}  // namespace llmk::op::attention_forward
