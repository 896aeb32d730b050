// What both attention backwards' declarations share (attention_backward
// with att, attention_backward_recompute with out and lse): the heads
// (NH ≥ 1, a divisor of C), qkv's counts, the math mode, no work without
// dqkv elements, and the problem's members for dqkv, dout and qkv.
#pragma once

#include <core/checked.hpp>
#include <core/op/call.hpp>
#include <kernels/attention_backward.hpp>
#include <llmk/attention_backward.hpp>
#include <llmk/types.hpp>
#include <stdexcept>
#include <string>

namespace llmk::op::attention {

// NH ≥ 1 (`nh_from` says where NH came from).
inline void check_some_heads(const char* op, index_t NH, const std::string& nh_from) {
  if (NH < 1)
    throw std::invalid_argument(std::string(op) + ": NH = " + std::to_string(NH) + " (" +
                                nh_from + "): at least one head was expected");
}

// NH divides C.
inline void check_heads_divide(const char* op, index_t C, index_t NH, const std::string& c_from,
                               const std::string& nh_from) {
  if (C % NH != 0)
    throw std::invalid_argument(std::string(op) + ": C = " + std::to_string(C) + " (" + c_from +
                                ") is not a multiple of NH = " + std::to_string(NH) + " (" +
                                nh_from + "): a head has HS = C / NH channels");
}

// The counts of qkv (and dqkv: `arrays` names them) (B·T·3C, and T·3C per
// sequence, which B = 0 would hide) within core::kMaxElements.
inline void check_qkv_counts(const char* op, index_t B, index_t T, index_t C,
                             const char* arrays = "qkv and dqkv") {
  using core::checked_product;
  const index_t M = checked_product(B, T, op, "M = B·T");
  const index_t C3 = checked_product(3, C, op, "3C");
  checked_product(M, C3, op, std::string("the elements of ") + arrays + ", B·T·3C");
  checked_product(T, C3, op, "T·3C, qkv's elements per sequence");
}

// B, T, C, NH of a call with qkv and the per-row lse (the recompute
// backward's, the forward's), checked: NH ≥ 1 and a divisor of C, and every
// array's element count (and each per-sequence count) within
// core::kMaxElements. `c_from` and `nh_from` say where C and NH came from.
inline void check_flash_sizes(const char* op, index_t B, index_t T, index_t C, index_t NH,
                              const std::string& c_from, const std::string& nh_from,
                              const char* qkv_arrays) {
  using core::checked_product;
  check_some_heads(op, NH, nh_from);
  check_qkv_counts(op, B, T, C, qkv_arrays);
  const index_t NHT = checked_product(NH, T, op, "NH·T, lse's elements per sequence");
  checked_product(B, NHT, op, "the elements of lse, B·NH·T");
  check_heads_divide(op, C, NH, c_from, nh_from);
}

// Where a bound call's size came from, for the messages: "C from qkv".
template <class Bound>
std::string from(const Bound& b, const char* symbol) {
  return std::string(symbol) + " from " + std::string(b.dims.source(symbol));
}

// The Op's members both share (core/op/entry.hpp, call.hpp). A "row" of the
// framework is a sequence: Sizes::M is B.
struct Heads {
  static Math math(const AttentionBackwardOptions& options) { return options.math; }

  // dqkv has no elements: nothing to compute, nothing to write.
  template <class Sizes>
  static bool is_empty(const Sizes& s) {
    return s.M == 0 || s.T == 0 || s.C == 0;
  }
  template <class ExecSpace, class P, class Sizes>
  static void empty_workspace(core::WorkspaceSize&, const Sizes&) {}
  template <class Call, class Problem>
  static void run_empty(Call&, const Problem&) {}
  template <class I, class Info>
  static void describe(Info&) {}

  // The problem's members both share: dqkv, dout and qkv, the sizes, the
  // scale 1/√HS, the update (Spec: the operation's argument indices).
  template <class Spec, class P, class Args, class Bound>
  static void bind_shared(Args& a, const Bound& b, const AttentionBackwardOptions& options) {
    a.dqkv = b.template data<typename P::dqkv>(Spec::dqkv);
    a.dout = b.template data<const typename P::in>(Spec::dout);
    a.qkv = b.template data<const typename P::in>(Spec::qkv);
    a.B = b["B"], a.T = b["T"], a.C = b["C"], a.NH = b["NH"];
    a.alpha = kernels::attention_scale(a.C / a.NH);
    a.overwrite = options.dqkv_update == Update::overwrite;
  }
};

}  // namespace llmk::op::attention
