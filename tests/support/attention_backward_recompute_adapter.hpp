// llmk::attention_backward_recompute described to the contract tests
// (tests/contract/operation.hpp lists what an adapter provides): the
// attention adapter's shapes, problems and options (support/attention_backward_adapter.hpp),
// with the recompute variant's arguments (out and lse in place of att), its
// implementations, its float64 reference (reference_backward_recompute) and
// its calls. Members it does not redeclare are attention_backward's.
#pragma once

#include "support/attention_backward_adapter.hpp"

#include <ops/attention_backward_recompute/spec.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

namespace llmk_test {

struct AttentionBackwardRecomputeContract : AttentionBackwardContract {
  static std::string name() { return "attention_backward_recompute"; }
  // "flash" tiles by the space's tuning, and the host spaces share one: the
  // same sums in the same order on Serial and OpenMP.
  static constexpr bool same_bits_on_host_spaces = true;

  // No math mode (no TF32: no implementation has tensor cores): every space
  // runs each.
  static std::vector<Precision> precisions() { return {Precision::fp32, Precision::bf16}; }

  // Its own implementations (attention_backward's storage() and math() still).
  using Queries = OperationAdapter<llmk::AttentionBackwardRecompute>;
  template <class Space>
  static ImplCatalog catalog() {
    return Queries::catalog<Space>();
  }
  static std::vector<std::string> foreign_impls() { return Queries::foreign_impls(); }

  // The reference library's shapes, and heads of 64 channels with every row
  // 16-byte aligned (qkv at its allocation, where the other shapes' qkv is
  // only element aligned): flash_mma's vector path (cp.async tiles, the
  // rows' D by row_dots_kernel) and, T past two blocks of 64, its tiles with
  // no masked pair. Without it those ran only at the Large and HugeRows
  // shapes: a planted bug in the row dots passed every other test.
  static const std::vector<Shape>& shapes() {
    static const std::vector<Shape> v = [] {
      std::vector<Shape> s = AttentionBackwardContract::shapes();
      s.push_back({"heads64", 2, 136, 128, 2});
      return s;
    }();
    return v;
  }
  static bool rows_aligned(const Shape& s) { return s.name == "heads64"; }

  // "flash" at T = 1024 takes seconds on a CPU: none is slow.
  template <class Space>
  static std::string slow_reason(const std::string&, const Shape&) {
    return {};
  }
  // lse's element n/2 + 1 (where NanInputs plants its NaN) is (h 1, t 4):
  // its row's P is NaN, so dq[4] and dk of the keys ≤ 4 are.
  static Shape nan_shape() { return {"nan", 1, 6, 6, 3}; }

  // --- arguments, in the order of the entry points --------------------------------

  enum Arg : std::size_t { dqkv, dout, qkv, out, lse };  // spec.hpp's order

  // lse is (B, NH, T) float through every entry; it fixes B, NH and T (spec.hpp).
  static std::vector<ArgSpec> args(const Shape& s, Precision p) {
    std::vector<ArgSpec> v = contract::spec_args<llmk::op::attention_backward_recompute::Spec>(
        {{"B", s.B}, {"T", s.T}, {"C", s.C}, {"NH", s.NH}}, storage(p));
    v[dqkv].alignment = v[lse].alignment = Alignment::Element;
    v[qkv].alignment = rows_aligned(s) ? Alignment::Allocation : Alignment::Element;
    return v;
  }

  // In the order the entry checks them (entry.cpp's check_sizes).
  static std::vector<contract::Overflow> overflows() {
    constexpr std::int64_t k20 = std::int64_t(1) << 20, k32 = std::int64_t(1) << 32,
                           k40 = std::int64_t(1) << 40, k62 = std::int64_t(1) << 62;
    return {
        {{k32, k32, 4, 1}, "M = B·T"},         // 2⁶⁴ wraps int64 to 0
        {{1, 1, k62, 1}, "3C"},                // 3·2⁶² wraps
        {{k20, k20, k20, 1}, "B·T·3C"},        // 3·2⁶⁰ elements of qkv
        {{1, k40, 4, k32}, "NH·T"},            // 2⁷² elements of lse per sequence
        // No sequences, so every array is empty, yet the sizes alone overflow:
        // refused on the per-sequence counts.
        {{0, 3, k62, 1}, "3C"},
        {{0, k40, 4, k32}, "NH·T"},
    };
  }

  // --- problems and the reference ---------------------------------------------------

  template <class P>
  static auto& values(P& p, std::size_t arg) {
    switch (arg) {
      case dqkv: return p.dqkv;
      case dout: return p.dout;
      case qkv: return p.qkv;
      case out: return p.out;
      case lse: return p.lse;
    }
    throw std::out_of_range("attention_backward_recompute has 5 arguments");
  }

  static std::vector<std::vector<double>> reference(const Problem& p,
                                                    const contract::Overwrites& o) {
    return {llmk::reference::attention::reference_backward_recompute(p, o[0])};
  }
  // "flash"'s sums run over the causal terms alone: exactly the reference's
  // NaN (the bound is the reference itself). "flash_mma" (and
  // "flash_mma_ds", whose dq reads the dk/dv kernel's dS) multiplies whole
  // tiles of 64 positions, a masked pair a zero (0·NaN is NaN): a NaN in q_t
  // reaches dk, one in dout_h[t] dv, of the keys after t in t's tile, and a
  // NaN in k_u dq of the queries before u in u's tile (flash_mma.hpp).
  static std::vector<std::vector<double>> nan_bound(const Problem& p,
                                                    const contract::Overwrites& o,
                                                    const std::string& impl) {
    std::vector<std::vector<double>> bound = reference(p, o);
    if (impl != "flash_mma" && impl != "flash_mma_ds") return bound;
    constexpr std::int64_t kTile = 64;  // kFlashMmaBlock
    const Shape& s = p.shape;
    const std::int64_t T = s.T, C = s.C, HS = s.HS();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const auto any_nan = [HS](const std::vector<float>& a, std::int64_t at) {
      for (std::int64_t d = 0; d < HS; ++d)
        if (std::isnan(a[std::size_t(at + d)])) return true;
      return false;
    };
    // Channels [part·C + h·HS, + HS) of dqkv's row (b, t).
    const auto mark = [&](std::int64_t b, std::int64_t t, std::int64_t part, std::int64_t h) {
      for (std::int64_t d = 0; d < HS; ++d)
        bound[0][std::size_t((b * T + t) * 3 * C + part * C + h * HS + d)] = nan;
    };
    for (std::int64_t b = 0; b < s.B; ++b)
      for (std::int64_t h = 0; h < s.NH; ++h)
        for (std::int64_t t = 0; t < T; ++t) {
          const std::int64_t tile0 = t / kTile * kTile, tile1 = std::min(tile0 + kTile, T);
          const bool q_nan = any_nan(p.qkv, (b * T + t) * 3 * C + h * HS);
          const bool k_nan = any_nan(p.qkv, (b * T + t) * 3 * C + C + h * HS);
          const bool dout_nan = any_nan(p.dout, (b * T + t) * C + h * HS);
          for (std::int64_t u = t + 1; u < tile1; ++u) {
            if (q_nan) mark(b, u, 1, h);
            if (dout_nan) mark(b, u, 2, h);
          }
          if (k_nan)
            for (std::int64_t q = tile0; q < t; ++q) mark(b, q, 0, h);
        }
    return bound;
  }

  static Options options(const std::string& impl, Precision, const contract::Overwrites& o) {
    Options options;
    options.impl = impl;
    options.dqkv_update = contract::update(o[0]);
    return options;
  }

  static double tolerance(Precision p, std::size_t) {
    return llmk::reference::attention::recompute_tolerance(p);
  }

  // --- calls ------------------------------------------------------------------------

  template <class Space>
  static std::size_t workspace_bytes(const Shape& s, const Options& options, Precision p) {
    return llmk::attention_backward_recompute_workspace_bytes<Space>(
        s.B, s.T, s.C, s.NH, options, llmk::reference::precision_name(p));
  }

  template <class Target, class Space>
  static void call(Target& target, const std::vector<llmk::TensorRef<Space>>& out,
                   const std::vector<llmk::ConstTensorRef<Space>>& in, const Options& options) {
    llmk::attention_backward_recompute(target, out[0], in[0], in[1], in[2], in[3], options);
  }

  template <class Target>
  static void call_raw(Target& target, const std::vector<llmk::BufferRef>& out,
                       const std::vector<llmk::ConstBufferRef>& in,
                       const std::vector<std::int64_t>& dims, const Options& options) {
    llmk::attention_backward_recompute(target, out[0], in[0], in[1], in[2],
                                       static_cast<const float*>(in[3].data), dims[0], dims[1],
                                       dims[2], dims[3], options);
  }
};

}  // namespace llmk_test
