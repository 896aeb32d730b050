// The encoder forward as the shared framework sees it (core/op/): its
// declaration (spec.hpp), its typed problem, its implementations in the
// order "auto" prefers them, the limits its sizes meet, and the tokens'
// check before any write.
#pragma once

#include <core/op/call.hpp>
#include <core/op/entry.hpp>
#include <core/op/impl_traits.hpp>
#include <core/registry.hpp>
#include <kernels/tokens.hpp>
#include <ops/encoder_forward/kernels.hpp>
#include <ops/encoder_forward/spec.hpp>

#include <stdexcept>
#include <string>

namespace llmk::op::encoder_forward {

struct Sizes {
  index_t M = 0, C = 0;  // M = B·T positions
  index_t T = 0, V = 0;
};

template <class ExecSpace, class P = Fp32>
struct Problem {
  using precision = P;
  Args<ExecSpace, typename P::in, typename P::out> args;
  index_t M = 0, C = 0;

  Sizes sizes() const { return {M, C, args.T, index_t(args.wte.extent(0))}; }
  // Never asked for: no implementation limits the rows (Op::limits bounds the
  // positions), and a chunk of positions would need wpe's rows cut alike.
  Problem rows(index_t, index_t) const {
    throw std::logic_error(std::string(Spec::name) + ": positions are not run in chunks");
  }
};

template <class ExecSpace>
using Call = core::op::Call<ExecSpace, EncoderForwardOptions>;

using ImplDefaults = core::op::AnyPrecisionNoWorkspace;

// "packed": 16 bytes a load on a GPU (llm.c's encoder_forward3), a
// vectorized row a thread step on a host.
struct Packed : ImplDefaults {
  static constexpr std::string_view name = "packed";
  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    encoder_forward_packed(call.exec, p.args);
  }
};

// "naive": a thread per element, the baseline.
struct Naive : ImplDefaults {
  static constexpr std::string_view name = "naive";
  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    encoder_forward_elements(call.exec, p.args);
  }
};

struct Op : Spec, core::op::OpDefaults {
  using Implementations = core::ImplList<Packed, Naive>;
  using Sizes = encoder_forward::Sizes;

  // out's rows are C wide; the positions (B·T) are what an implementation
  // bounds; wte (V × C) is the array not indexed by rows.
  static core::op::SizeLimits limits(const Sizes& s) {
    return {s.C, {{"B·T (positions)", s.M}}, {"V·C (wte's elements)", s.V * s.C}};
  }
  static bool is_empty(const Sizes& s) { return s.M == 0 || s.C == 0; }
  // The tokens' verdict before anything is written (check_tokens), also of
  // a call with no channels.
  template <class ExecSpace, class P>
  static void before_run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    if (!p.args.check_tokens || p.M == 0) return;
    const index_t V = index_t(p.args.wte.extent(0));
    const index_t bad = kernels::first_bad_token(call.exec, p.args.tokens, V);
    if (bad >= 0) kernels::refuse_token_at(call.exec, Spec::name, p.args.tokens, bad, p.args.T, V);
  }

  template <class ExecSpace, class P, class Bound>
  static Problem<ExecSpace, P> problem(const Bound& b, const Options& options) {
    const index_t B = b["B"], T = b["T"], C = b["C"], V = b["V"], M = B * T;
    Problem<ExecSpace, P> p;
    auto& a = p.args;
    a.out = b.template matrix<typename P::out>(out, M, C);
    a.wte = b.template matrix<const typename P::in>(wte, V, C);
    a.wpe = b.template matrix<const typename P::in>(wpe, T, C);
    a.tokens = decltype(a.tokens)(b.template data<const int>(tokens), M);
    a.T = T;
    a.overwrite_out = options.out_update == Update::overwrite;
    a.check_tokens = options.check_tokens;
    p.M = M, p.C = C;
    return p;
  }
};

}  // namespace llmk::op::encoder_forward
