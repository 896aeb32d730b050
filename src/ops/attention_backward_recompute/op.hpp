// The recompute attention backward as the shared framework sees it
// (core/op/): its implementation list, precisions, the limits its sizes
// meet, and what a call without work still writes.
#pragma once

#include <core/op/call.hpp>
#include <core/op/typed.hpp>
#include <core/registry.hpp>
#include <ops/attention_backward_recompute/flash.hpp>
#include <ops/attention_backward_recompute/flash_mma.hpp>

#include <algorithm>

namespace llmk::op::attention_backward_recompute {

// "auto": flash_mma_ds where it runs (bf16, as flash_mma, its tiles of dS
// within 1 GiB), else flash_mma where it runs (bf16 and fp32, heads up to
// 64, sm_80+), else flash.
using Implementations = core::ImplList<FlashMmaDs, FlashMma, Flash>;

struct Op {
  static constexpr const char* name = kOpName;
  using Implementations = attention_backward_recompute::Implementations;
  using Precisions = attention_backward_recompute::Precisions;
  using Sizes = attention_backward_recompute::Sizes;
  using Info = AttentionBackwardImplInfo;

  // A "row" of the framework is a sequence: its widest array is qkv's T·3C
  // (or lse's NH·T). No column limits, no array of fixed size.
  static core::op::SizeLimits limits(const Sizes& s) {
    return {std::max(s.NH * s.T, s.T * 3 * s.C), {}, {"(none)", 0}};
  }

  // dqkv has no elements: nothing to compute, nothing to write.
  static bool is_empty(const Sizes& s) { return s.M == 0 || s.T == 0 || s.C == 0; }
  template <class ExecSpace, class P>
  static void empty_workspace(core::WorkspaceSize&, const Sizes&) {}
  template <class ExecSpace, class P>
  static void run_empty(Call<ExecSpace>&, const Problem<ExecSpace, P>&) {}

  template <class I>
  static void describe(Info&) {}
};

}  // namespace llmk::op::attention_backward_recompute
