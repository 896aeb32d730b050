// The encoder backward as the shared framework sees it (core/op/).
#pragma once

#include <core/op/call.hpp>
#include <core/op/typed.hpp>
#include <core/registry.hpp>
#include <ops/encoder_backward/block_sort.hpp>
#include <ops/encoder_backward/sorted.hpp>

namespace llmk::op::encoder_backward {

// "auto" takes the first that runs on the space: block_sort on Cuda.
using Implementations = core::ImplList<BlockSort, Sorted>;

struct Op {
  static constexpr const char* name = kOpName;
  using Implementations = encoder_backward::Implementations;
  using Precisions = encoder_backward::Precisions;
  using Sizes = encoder_backward::Sizes;
  using Info = EncoderBackwardImplInfo;

  // dout's rows are C wide; the positions (B·T) are what an implementation
  // bounds; dwte (V × C) is the array not indexed by rows.
  static core::op::SizeLimits limits(const Sizes& s) {
    return {s.C, {{"B·T (positions)", s.M}}, {"V·C (dwte's elements)", s.V * s.C}};
  }

  static bool is_empty(const Sizes& s) { return s.M == 0 || s.C == 0; }

  // No positions or no channels: the tokens are still checked; overwritten
  // outputs become zeros.
  template <class ExecSpace, class P>
  static void empty_workspace(core::WorkspaceSize&, const Sizes&) {}
  template <class ExecSpace, class P>
  static void run_empty(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    if (p.M > 0 && p.args.check_tokens) check_tokens(call.exec, p);
    if (p.args.overwrite_dwte) core::op::fill_zero(call.exec, p.args.dwte);
    if (p.args.overwrite_dwpe) core::op::fill_zero(call.exec, p.args.dwpe);
  }

  template <class I>
  static void describe(Info&) {}
};

}  // namespace llmk::op::encoder_backward
