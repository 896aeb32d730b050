// What both attention backwards' entry points check alike (attention_backward
// with att, attention_backward_recompute with out and lse): the heads, and
// the activations dqkv, dout, qkv (and out) of rank 3 (B, T, ·) or rank 2
// (B·T, ·), whose B and T come from the call's leader (att, or lse).
#pragma once

#include <core/validate.hpp>
#include <llmk/tensor_ref.hpp>
#include <llmk/types.hpp>

#include <initializer_list>
#include <stdexcept>
#include <string>

namespace llmk::op::attention {

// NH ≥ 1 (`nh_from` says where NH came from).
inline void check_some_heads(const char* op, index_t NH, const char* nh_from) {
  if (NH < 1)
    throw std::invalid_argument(std::string(op) + ": NH = " + std::to_string(NH) + " (" +
                                nh_from + "): at least one head was expected");
}

// NH divides C.
inline void check_heads_divide(const char* op, index_t C, index_t NH, const char* c_from,
                               const char* nh_from) {
  if (C % NH != 0)
    throw std::invalid_argument(std::string(op) + ": C = " + std::to_string(C) + " (" + c_from +
                                ") is not a multiple of NH = " + std::to_string(NH) + " (" +
                                nh_from + "): a head has HS = C / NH channels");
}

[[noreturn]] inline void refuse_rank(const char* op, const detail::ArgInfo& a,
                                     const char* expected) {
  throw std::invalid_argument(std::string(op) + ": argument '" + a.name + "' has extents " +
                              detail::extents_string(a) + " but " + expected + " was expected");
}

// C of a call: qkv's last extent / 3 where qkv has dout's rank and a last
// extent that is a multiple of 3, else dout's last extent (qkv's is then
// reported wrong). `dout` is of rank 2 or 3 (checked by the caller).
struct Channels {
  index_t C = 0;
  bool from_qkv = false;
  const char* from() const { return from_qkv ? "qkv's last extent / 3" : "dout's last extent"; }
};
template <class Ref>
Channels channels_of(const Ref& dout, const Ref& qkv) {
  const index_t qkv_last = qkv.rank() > 0 ? qkv.extent(qkv.rank() - 1) : 0;
  Channels c;
  c.from_qkv = qkv.rank() == dout.rank() && qkv_last % 3 == 0;
  c.C = c.from_qkv ? qkv_last / 3 : dout.extent(dout.rank() - 1);
  return c;
}

// dout (and each of `like_dout`, out) (B, T, C), qkv and dqkv (B, T, 3C) in
// rank 3, or (B·T, ·) in rank 2, B and T from `leader` ("att").
inline void expect_activations(const char* op, const char* leader, bool rank3, index_t B,
                               index_t T, const Channels& c, const detail::ArgInfo& dqkv,
                               const detail::ArgInfo& dout, const detail::ArgInfo& qkv,
                               std::initializer_list<const detail::ArgInfo*> like_dout = {}) {
  using detail::expect_extents;
  const index_t C = c.C, M = B * T;
  const std::string lead = rank3 ? "(B, T, " : "(B·T, ";
  const std::string act = lead + "C) from " + leader + "'s B, T and qkv's C";
  const std::string wide =
      lead + "3C) from " + leader + (c.from_qkv ? "'s B and T" : "'s B, T and dout's C");
  const std::string same = lead + "3C), the extents of qkv";
  if (rank3) {
    expect_extents(op, dout, {B, T, C}, act.c_str());
    for (const detail::ArgInfo* a : like_dout) expect_extents(op, *a, {B, T, C}, act.c_str());
    expect_extents(op, qkv, {B, T, 3 * C}, wide.c_str());
    expect_extents(op, dqkv, {B, T, 3 * C}, same.c_str());
  } else {
    expect_extents(op, dout, {M, C}, act.c_str());
    for (const detail::ArgInfo* a : like_dout) expect_extents(op, *a, {M, C}, act.c_str());
    expect_extents(op, qkv, {M, 3 * C}, wide.c_str());
    expect_extents(op, dqkv, {M, 3 * C}, same.c_str());
  }
}

}  // namespace llmk::op::attention
