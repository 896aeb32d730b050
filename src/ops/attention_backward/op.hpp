// The attention backward as the shared framework sees it (core/op/): its
// declaration (spec.hpp), its implementations in the order "auto" prefers
// them, the limits its sizes meet, what the declaration cannot say (the
// heads, the counts that must not overflow) and its typed problem.
#pragma once

#include <core/checked.hpp>
#include <core/op/call.hpp>
#include <core/op/entry.hpp>
#include <core/registry.hpp>
#include <ops/attention_backward/cublas.hpp>
#include <ops/attention_backward/heads.hpp>
#include <ops/attention_backward/materialized.hpp>
#include <ops/attention_backward/naive.hpp>

#include <algorithm>
#include <string>

namespace llmk::op::attention_backward {

// B, T, C, NH of a call, checked: NH ≥ 1 and a divisor of C, and every
// array's element count (and each per-sequence count, which B = 0 would
// hide) within core::kMaxElements. `c_from` and `nh_from` say where C and NH
// came from, for the messages.
inline void check_sizes(index_t B, index_t T, index_t C, index_t NH, const std::string& c_from,
                        const std::string& nh_from) {
  using core::checked_product;
  attention::check_some_heads(kOpName, NH, nh_from);
  attention::check_qkv_counts(kOpName, B, T, C);
  const index_t NHT = checked_product(NH, T, kOpName, "NH·T");
  checked_product(NHT, T, kOpName, "NH·T·T, att's elements per sequence");
  checked_product(checked_product(B, NHT, kOpName, "B·NH·T"), T, kOpName,
                  "the elements of att, B·NH·T·T");
  attention::check_heads_divide(kOpName, C, NH, c_from, nh_from);
}

struct Op : Spec, attention::Heads {
  // "cublas" (Cuda, cuBLAS's strided-batched GEMMs) first where it is
  // compiled; "materialized" does the products with the portable tiled
  // GEMM; "naive" is the baseline (a factor HS more multiply-adds, and no
  // T × T workspace).
  using Implementations = core::ImplList<Cublas, Materialized, Naive>;
  using Sizes = attention_backward::Sizes;
  using Info = AttentionBackwardImplInfo;

  // A "row" of the framework is a sequence (Sizes::M = B): its widest array
  // is att's NH·T·T or qkv's T·3C. No column limits, no array of fixed size.
  static core::op::SizeLimits limits(const Sizes& s) {
    return {std::max(s.NH * s.T * s.T, s.T * 3 * s.C), {}, {"(none)", 0}};
  }

  template <class Bound>
  static void check(const Bound& b) {
    check_sizes(b["B"], b["T"], b["C"], b["NH"], attention::from(b, "C"),
                "att's extent 1, the heads");
  }

  template <class ExecSpace, class P, class Bound>
  static Problem<ExecSpace, P> problem(const Bound& b, const Options& options) {
    Problem<ExecSpace, P> p;
    bind_shared<Spec, P>(p.args, b, options);
    p.args.att = b.template data<const typename P::in>(att);
    p.M = p.args.B;
    return p;
  }
};

}  // namespace llmk::op::attention_backward
