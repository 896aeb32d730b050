// What both attention backwards' declarations share (attention_backward
// with att, attention_backward_recompute with out and lse): the heads
// (NH ≥ 1, a divisor of C), the math mode, and no work without dqkv
// elements.
#pragma once

#include <core/op/call.hpp>
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
};

}  // namespace llmk::op::attention
