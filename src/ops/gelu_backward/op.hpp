// The GELU backward as the shared framework sees it (core/op/): its
// implementations in the order "auto" prefers them, its precisions, the
// limits its sizes meet, and what a call without elements still writes.
#pragma once

#include <core/op/call.hpp>
#include <core/op/typed.hpp>
#include <core/registry.hpp>
#include <ops/gelu_backward/naive.hpp>
#include <ops/gelu_backward/packed.hpp>

namespace llmk::op::gelu_backward {

// "packed" moves 16 bytes a load; "naive" is the baseline.
using Implementations = core::ImplList<Packed, Naive>;

struct Op {
  static constexpr const char* name = kOpName;
  using Implementations = gelu_backward::Implementations;
  using Precisions = gelu_backward::Precisions;
  using Sizes = gelu_backward::Sizes;
  using Info = GeluBackwardImplInfo;

  // Rows of C elements; no array that is not indexed by rows.
  static core::op::SizeLimits limits(const Sizes& s) { return {s.C, {}, {"N", 0}}; }

  static bool is_empty(const Sizes& s) { return s.M == 0 || s.C == 0; }

  // No elements: nothing to write.
  template <class ExecSpace, class P>
  static void empty_workspace(core::WorkspaceSize&, const Sizes&) {}
  template <class ExecSpace, class P>
  static void run_empty(Call<ExecSpace>&, const Problem<ExecSpace, P>&) {}

  template <class I>
  static void describe(Info&) {}
};

}  // namespace llmk::op::gelu_backward
