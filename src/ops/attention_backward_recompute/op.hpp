// The recompute attention backward as the shared framework sees it
// (core/op/): its declaration (spec.hpp), its implementations in the order
// "auto" prefers them, the limits its sizes meet, what the declaration
// cannot say (the heads, the counts that must not overflow) and its typed
// problem.
#pragma once

#include <core/checked.hpp>
#include <core/op/call.hpp>
#include <core/op/entry.hpp>
#include <core/registry.hpp>
#include <ops/attention_backward/heads.hpp>
#include <ops/attention_backward_recompute/flash.hpp>
#include <ops/attention_backward_recompute/flash_mma.hpp>

#include <algorithm>
#include <string>

namespace llmk::op::attention_backward_recompute {

// B, T, C, NH of a call, checked: NH ≥ 1 and a divisor of C, and every
// array's element count (and each per-sequence count, which B = 0 would
// hide) within core::kMaxElements. `c_from` and `nh_from` say where C and NH
// came from, for the messages.
inline void check_sizes(index_t B, index_t T, index_t C, index_t NH, const std::string& c_from,
                        const std::string& nh_from) {
  attention::check_flash_sizes(kOpName, B, T, C, NH, c_from, nh_from, "qkv and dqkv");
}

struct Op : Spec, attention::Heads {
  // "auto": flash_mma_ds where it runs (bf16, as flash_mma, its tiles of dS
  // within 1 GiB), else flash_mma where it runs (bf16 and fp32, heads up to
  // 64, sm_80+), else flash.
  using Implementations = core::ImplList<FlashMmaDs, FlashMma, Flash>;
  using Sizes = attention_backward_recompute::Sizes;
  using Info = AttentionBackwardImplInfo;

  // A "row" of the framework is a sequence: its widest array is qkv's T·3C
  // (or lse's NH·T). No column limits, no array of fixed size.
  static core::op::SizeLimits limits(const Sizes& s) {
    return {std::max(s.NH * s.T, s.T * 3 * s.C), {}, {"(none)", 0}};
  }

  template <class Bound>
  static void check(const Bound& b) {
    check_sizes(b["B"], b["T"], b["C"], b["NH"], attention::from(b, "C"),
                "lse's extent 1, the heads");
  }

  template <class ExecSpace, class P, class Bound>
  static Problem<ExecSpace, P> problem(const Bound& b, const Options& options) {
    Problem<ExecSpace, P> p;
    bind_shared<Spec, P>(p.args, b, options);
    p.args.out = b.template data<const typename P::in>(out);
    p.args.lse = b.template data<const float>(lse);
    p.M = p.args.B;
    return p;
  }
};

}  // namespace llmk::op::attention_backward_recompute
