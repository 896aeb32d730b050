// The classifier backward as the shared framework sees it (core/op/): its
// implementations in the order "auto" prefers them, its precisions, the
// limits its sizes meet, and what a call without rows still writes.
#pragma once

#include <core/op/call.hpp>
#include <core/op/typed.hpp>
#include <core/registry.hpp>
#include <ops/classifier_backward/fused.hpp>
#include <ops/classifier_backward/naive.hpp>
#include <ops/classifier_backward/row_in_shared.hpp>

namespace llmk::op::classifier_backward {

// "row_in_shared" reads a bf16 row once from memory on Cuda; "fused" reads
// it twice, the second time mostly from the cache; "naive" is the baseline.
using Implementations = core::ImplList<RowInShared, Fused, Naive>;

struct Op {
  static constexpr const char* name = kOpName;
  using Implementations = classifier_backward::Implementations;
  using Precisions = classifier_backward::Precisions;
  using Sizes = classifier_backward::Sizes;
  using Info = ClassifierBackwardImplInfo;

  // logits and dlogits rows are Vp wide; no array is not indexed by rows.
  static core::op::SizeLimits limits(const Sizes& s) {
    return {s.Vp, {{"Vp", s.Vp}}, {"", 0}};
  }

  static bool is_empty(const Sizes& s) { return s.M == 0; }

  // No rows: nothing to write.
  template <class ExecSpace, class P>
  static void empty_workspace(core::WorkspaceSize&, const Sizes&) {}
  template <class ExecSpace, class P>
  static void run_empty(Call<ExecSpace>&, const Problem<ExecSpace, P>&) {}

  template <class I>
  static void describe(Info&) {}
};

}  // namespace llmk::op::classifier_backward
