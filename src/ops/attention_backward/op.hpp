// The attention backward as the shared framework sees it (core/op/): its
// implementations in the order "auto" prefers them, its precisions, the
// limits its sizes meet, and what a call without work still writes.
#pragma once

#include <core/op/call.hpp>
#include <core/op/typed.hpp>
#include <core/registry.hpp>
#include <ops/attention_backward/cublas.hpp>
#include <ops/attention_backward/materialized.hpp>
#include <ops/attention_backward/naive.hpp>

#include <algorithm>

namespace llmk::op::attention_backward {

// "cublas" (Cuda, cuBLAS's strided-batched GEMMs) first where it is
// compiled; "materialized" does the products with the portable tiled GEMM;
// "naive" is the baseline (a factor HS more multiply-adds, and no T × T
// workspace).
using Implementations = core::ImplList<Cublas, Materialized, Naive>;

struct Op {
  static constexpr const char* name = kOpName;
  using Implementations = attention_backward::Implementations;
  using Precisions = attention_backward::Precisions;
  using Sizes = attention_backward::Sizes;
  using Info = AttentionBackwardImplInfo;

  // A "row" of the framework is a sequence (Sizes::M = B): its widest array
  // is att's NH·T·T or qkv's T·3C. No column limits, no array of fixed size.
  static core::op::SizeLimits limits(const Sizes& s) {
    return {std::max(s.NH * s.T * s.T, s.T * 3 * s.C), {}, {"(none)", 0}};
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

}  // namespace llmk::op::attention_backward
