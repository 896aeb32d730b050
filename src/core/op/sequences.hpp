// The typed problem of an operation over B whole sequences (the attentions,
// forward and backward): its arguments as one struct of row-major pointers
// and sizes, chunked by sequence. The framework's chunks (core/op/call.hpp)
// are then whole sequences, M of them: M is B.
#pragma once

#include <llmk/types.hpp>

namespace llmk::core::op {

// The sizes of a call, all that decides the workspace it needs.
struct SequenceSizes {
  index_t M = 0, T = 0, C = 0, NH = 1;
};

// Args: B, T, C, NH, and sequences(b0, count), its arrays' part of sequences
// [b0, b0 + count) with B = count.
template <class ExecSpace, class P, class ArgsT>
struct SequenceProblem {
  using precision = P;
  using Args = ArgsT;
  Args args;
  index_t M = 0;  // = args.B (the framework's name for the chunked count)

  SequenceSizes sizes() const { return {args.B, args.T, args.C, args.NH}; }

  SequenceProblem rows(const index_t b0, const index_t count) const {
    SequenceProblem p = *this;
    p.args = args.sequences(b0, count);
    p.M = count;
    return p;
  }
};

}  // namespace llmk::core::op
