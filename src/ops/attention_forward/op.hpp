// The attention forward as the shared framework sees it (core/op/): its
// declaration (spec.hpp), its implementations in the order "auto" prefers
// them, the limits its sizes meet, what the declaration cannot say (the
// heads, the counts that must not overflow) and its typed problem.
#pragma once

#include <core/checked.hpp>
#include <core/op/call.hpp>
#include <core/op/entry.hpp>
#include <core/registry.hpp>
#include <kernels/attention_backward.hpp>  // attention_scale
#include <ops/attention_backward/heads.hpp>
#include <ops/attention_forward/flash.hpp>
#include <ops/attention_forward/flash_mma.hpp>

#include <algorithm>
#include <string>

namespace llmk::op::attention_forward {

// B, T, C, NH of a call, checked: NH ≥ 1 and a divisor of C, and every
// array's element count (and each per-sequence count, which B = 0 would
// hide) within core::kMaxElements. `c_from` and `nh_from` say where C and NH
// came from, for the messages.
inline void check_sizes(index_t B, index_t T, index_t C, index_t NH, const std::string& c_from,
                        const std::string& nh_from) {
  attention::check_flash_sizes(kOpName, B, T, C, NH, c_from, nh_from, "qkv");
}

struct Op : Spec, core::op::OpDefaults {
  // "auto": flash_mma where it runs (bf16, heads up to 64, sm_80+), else flash.
  using Implementations = core::ImplList<FlashMma, Flash>;
  using Sizes = attention_forward::Sizes;

  // A "row" of the framework is a sequence: its widest array is qkv's T·3C
  // (or lse's NH·T). No column limits, no array of fixed size.
  static core::op::SizeLimits limits(const Sizes& s) {
    return {std::max(s.NH * s.T, s.T * 3 * s.C), {}, {"(none)", 0}};
  }
  // No positions: nothing to write. (C = 0 still writes lse: log of the
  // causal count, every logit 0.)
  static bool is_empty(const Sizes& s) { return s.M == 0 || s.T == 0; }

  template <class Bound>
  static void check(const Bound& b) {
    check_sizes(b["B"], b["T"], b["C"], b["NH"], attention::from(b, "C"),
                "lse's extent 1, the heads");
  }

  template <class ExecSpace, class P, class Bound>
  static Problem<ExecSpace, P> problem(const Bound& b, const Options& options) {
    Problem<ExecSpace, P> p;
    auto& a = p.args;
    a.out = b.template data<typename P::out>(out);
    a.lse = b.template data<float>(lse);
    a.qkv = b.template data<const typename P::in>(qkv);
    a.B = b["B"], a.T = b["T"], a.C = b["C"], a.NH = b["NH"];
    a.alpha = kernels::attention_scale(a.C / a.NH);
    a.overwrite = options.out_update == Update::overwrite;
    p.M = a.B;
    return p;
  }
};

}  // namespace llmk::op::attention_forward
