// The encoder backward as an operation of llmk: what every implementation
// receives (a validated Problem and a Call) and what it declares about itself
// (core/op/impl_traits.hpp).
#pragma once

#include <core/op/call.hpp>
#include <core/op/impl_traits.hpp>
#include <ops/encoder_backward/kernels.hpp>
#include <llmk/encoder_backward.hpp>
#include <ops/encoder_backward/spec.hpp>

#include <stdexcept>
#include <string>

namespace llmk::op::encoder_backward {

inline constexpr const char* kOpName = Spec::name;

struct Sizes {
  index_t M = 0, C = 0;  // M = B·T positions
  index_t T = 0, V = 0;
};

template <class ExecSpace, class P = Fp32>
struct Problem {
  using precision = P;
  using Args = kernels::EncoderArgs<ExecSpace, typename P::in, typename P::dwte, typename P::dwpe>;
  Args args;
  index_t M = 0, C = 0;

  Sizes sizes() const { return {M, C, args.T, index_t(args.dwte.extent(0))}; }

  // The framework's chunks of rows: never asked for (no implementation
  // limits the rows: Op::limits bounds the positions instead), and a chunk
  // of positions would need dwpe's rows cut alike.
  Problem rows(index_t, index_t) const {
    throw std::logic_error(std::string(kOpName) + ": positions are not run in chunks");
  }
};

template <class ExecSpace>
using Call = core::op::Call<ExecSpace, EncoderBackwardOptions>;

struct ImplDefaults : core::op::ImplDefaults {
  template <class P>
  static constexpr bool supports = true;
};

// Throws std::invalid_argument for the token at position `bad` (outside
// [0, V)), naming it and its value.
template <class ExecSpace, class P>
[[noreturn]] void refuse_token_at(const ExecSpace& exec, const Problem<ExecSpace, P>& p,
                                  const index_t bad) {
  kernels::refuse_token_at(exec, kOpName, p.args.tokens, bad, p.args.T,
                           index_t(p.args.dwte.extent(0)));
}

// Refuses a token outside [0, V) before anything is written (a call with no
// channels, which sorts nothing).
template <class ExecSpace, class P>
void check_tokens(const ExecSpace& exec, const Problem<ExecSpace, P>& p) {
  const index_t bad = kernels::first_bad_token(exec, p.args.tokens, index_t(p.args.dwte.extent(0)));
  if (bad >= 0) refuse_token_at(exec, p, bad);
}

}  // namespace llmk::op::encoder_backward
