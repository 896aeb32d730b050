// The attention backward as an operation of llmk: what every implementation
// receives (a validated Problem and a Call) and what it declares about itself
// (core/op/impl_traits.hpp).
#pragma once

#include <core/op/call.hpp>
#include <core/op/impl_traits.hpp>
#include <kernels/attention_backward.hpp>
#include <llmk/attention_backward.hpp>
#include <ops/attention_backward/spec.hpp>

namespace llmk::op::attention_backward {


// The sizes of a call, all that decides the workspace it needs. M is B, the
// batch of sequences: the framework's chunks (core/op/call.hpp) are whole
// sequences, M of them, and it calls that count M.
struct Sizes {
  index_t M = 0, T = 0, C = 0, NH = 1;
};

// Validated arguments of one precision configuration P: dqkv, dout, qkv, att
// as llm.c's row-major buffers, their sizes and dqkv's update
// (kernels/attention_backward.hpp).
template <class ExecSpace, class P = Fp32>
struct Problem {
  using precision = P;
  using Args = kernels::AttentionArgs<typename P::in, typename P::dqkv>;
  Args args;
  index_t M = 0;  // = args.B (the framework's name for the chunked count)

  Sizes sizes() const { return {args.B, args.T, args.C, args.NH}; }

  // Sequences [b0, b0 + count): every array's part of them.
  Problem rows(index_t b0, index_t count) const {
    Problem p = *this;
    const index_t T = args.T, C = args.C;
    p.args.dqkv += b0 * T * 3 * C;
    p.args.qkv += b0 * T * 3 * C;
    p.args.dout += b0 * T * C;
    p.args.att += b0 * args.NH * T * T;
    p.args.B = p.M = count;
    return p;
  }
};

template <class ExecSpace>
using Call = core::op::Call<ExecSpace, AttentionBackwardOptions>;

// Every implementation runs every precision (its kernels are templates on
// the element types).
struct ImplDefaults : core::op::ImplDefaults {
  template <class P>
  static constexpr bool supports = true;
};

}  // namespace llmk::op::attention_backward
