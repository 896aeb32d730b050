// llmk::attention_forward described to the contract tests
// (tests/contract/operation.hpp lists what an adapter provides): the
// recompute backward's shapes (support/attention_backward_recompute_adapter.hpp: its
// forward's arguments have the same sizes), its arguments from its
// declaration, its float64 reference (reference_forward, the forward the
// backward problems are made with) and its calls.
#pragma once

#include "support/attention_backward_recompute_adapter.hpp"

#include <llmk/attention_forward.hpp>
#include <ops/attention_forward/spec.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace llmk_test {

struct AttentionForwardContract : OperationAdapter<llmk::AttentionForward>,
                                  ShapesOf<AttentionBackwardRecomputeContract> {
  using Shape = llmk::reference::attention::Shape;
  using Problem = llmk::reference::attention::HostProblem;
  using Options = llmk::AttentionForwardOptions;
  using Spec = llmk::op::attention_forward::Spec;
  using Shapes = AttentionBackwardRecomputeContract;

  static std::string name() { return "attention_forward"; }
  // "flash" tiles by the space's tuning, which the host spaces share.
  static constexpr bool same_bits_on_host_spaces = true;
  static std::vector<Precision> precisions() { return {Precision::fp32, Precision::bf16}; }
  static constexpr bool no_two_inputs_alike = true;  // one input, qkv

  // --- arguments: out, lse, qkv (lse fixes B, NH and T) ---------------------------------
  enum Arg : std::size_t { out, lse, qkv };  // spec.hpp's order
  static std::vector<ArgSpec> args(const Shape& s, Precision p) {
    std::vector<ArgSpec> v =
        contract::spec_args<Spec>({{"B", s.B}, {"T", s.T}, {"C", s.C}, {"NH", s.NH}}, p);
    v[Spec::out].alignment = v[Spec::lse].alignment = Alignment::Element;
    v[Spec::qkv].alignment = Shapes::rows_aligned(s) ? Alignment::Allocation : Alignment::Element;
    return v;
  }
  static std::vector<contract::Dim> dims(const Shape& s) { return Shapes::dims(s); }
  // The recompute backward's, whose entry checks the same counts in the same order.
  static std::vector<contract::Overflow> overflows() { return Shapes::overflows(); }

  // --- problems and the reference ---------------------------------------------------
  static Problem make(const Shape& s, std::uint32_t seed, Precision p) {
    return llmk::reference::attention::make_problem(s, seed, p);
  }
  template <class P>
  static auto& values(P& p, std::size_t arg) {
    switch (arg) {
      case Spec::out: return p.out;
      case Spec::lse: return p.lse;
      case Spec::qkv: return p.qkv;
    }
    throw std::out_of_range("attention_forward has 3 arguments");
  }
  // (lse is written whatever the update: only out's matters.)
  static std::vector<std::vector<double>> reference(const Problem& p,
                                                    const contract::Overwrites& o) {
    return llmk::reference::attention::reference_forward(p, o[0]);
  }
  // "flash" sums over the causal keys alone: exactly the reference's NaN.
  // "flash_mma" multiplies P by v a whole tile of 64 keys at a time, a masked
  // pair a zero probability (0·NaN is NaN): a NaN in v_u also reaches out of
  // the queries before u in u's tile (flash_mma.hpp).
  static std::vector<std::vector<double>> nan_bound(const Problem& p,
                                                    const contract::Overwrites& o,
                                                    const std::string& impl) {
    std::vector<std::vector<double>> bound = reference(p, o);
    if (impl != "flash_mma") return bound;
    constexpr std::int64_t kTile = 64;  // kFlashMmaBlock
    const Shape& s = p.shape;
    const std::int64_t T = s.T, C = s.C, HS = s.HS();
    for (std::int64_t b = 0; b < s.B; ++b)
      for (std::int64_t h = 0; h < s.NH; ++h)
        for (std::int64_t u = 0; u < T; ++u) {
          bool v_nan = false;
          for (std::int64_t d = 0; d < HS; ++d)
            v_nan = v_nan || std::isnan(p.qkv[std::size_t((b * T + u) * 3 * C + 2 * C + h * HS + d)]);
          if (!v_nan) continue;
          for (std::int64_t t = u / kTile * kTile; t < u; ++t)
            for (std::int64_t d = 0; d < HS; ++d)
              bound[0][std::size_t((b * T + t) * C + h * HS + d)] =
                  std::numeric_limits<double>::quiet_NaN();
        }
    return bound;
  }
  // out: the backward's tolerances (llmk::reference::attention::tolerance:
  // fp32 5e-5; bf16 4e-3, one rounding of a float result, and flash_mma's
  // probabilities rounded to bf16 before P·v, each a term's weight off by at
  // most 2⁻⁹ relative, independent: their effect on the weighted mean well
  // within one rounding). lse is float in both precisions, from exact inputs
  // in float sums (the logit, a dot of HS terms: ≈ u·√HS relative; the sum
  // of exponentials, ≈ u·√T; exp's few ulp): fp32's 5e-5 in both.
  static double tolerance(Precision p, std::size_t output) {
    return llmk::reference::attention::tolerance(output == 0 ? p : Precision::fp32);
  }

  // --- calls (options: OperationAdapter's, out = or +=) ---------------------------------
  template <class Space>
  static std::size_t workspace_bytes(const Shape& s, const Options& options, Precision p) {
    return llmk::attention_forward_workspace_bytes<Space>(s.B, s.T, s.C, s.NH, options,
                                                          llmk::reference::precision_name(p));
  }
  template <class Target, class Space>
  static void call(Target& target, const std::vector<llmk::TensorRef<Space>>& out,
                   const std::vector<llmk::ConstTensorRef<Space>>& in, const Options& options) {
    llmk::attention_forward(target, out[0], out[1], in[0], options);
  }
  template <class Target>
  static void call_raw(Target& target, const std::vector<llmk::BufferRef>& out,
                       const std::vector<llmk::ConstBufferRef>& in,
                       const std::vector<std::int64_t>& dims, const Options& options) {
    llmk::attention_forward(target, out[0], static_cast<float*>(out[1].data), in[0], dims[0],
                            dims[1], dims[2], dims[3], options);
  }
};

}  // namespace llmk_test
