// llmk::encoder_backward described to the contract tests
// (tests/contract/operation.hpp lists what an adapter provides): its
// implementations, precisions and shapes, its arguments in the order of its
// entry points (tokens an int32 input, valid in [0, V)), its reference
// library (llmk_encoder_backward_reference) and its calls.
//
// Its view entry takes dout as (B, T, C) only, tokens as (B, T): the
// contract's rank-2 and rank-3 entries pass the same views (the rank-2
// entry of the others' (M, C) has no counterpart here).
#pragma once

#include "contract/operation.hpp"
#include "support/compare.hpp"
#include "contract/spec_adapter.hpp"
#include "support/foreign_impls.hpp"

#include <llmk/encoder_backward.hpp>
#include <ops/encoder_backward/reference/reference.hpp>
#include <ops/encoder_backward/spec.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace llmk_test {

struct EncoderBackwardContract : OperationAdapter<llmk::EncoderBackward> {
  using Shape = llmk::reference::encoder::Shape;
  using Problem = llmk::reference::encoder::HostProblem;
  using Options = llmk::EncoderBackwardOptions;
  using Tokens = llmk::reference::encoder::Tokens;
  static_assert(std::is_same_v<int, std::int32_t>, "the problem's tokens are the entry's int32");

  static std::string name() { return "encoder_backward"; }
  // Each (token, channel) adds its positions in increasing order, each (t,
  // channel) its batch rows in order of b (llmk/encoder_backward.hpp): the
  // same bits on every space and thread count.
  static constexpr bool same_bits_on_host_spaces = true;
  // Its inputs are float dout and int32 tokens: no two to share memory.
  static constexpr bool no_two_inputs_alike = true;

  static std::vector<Precision> precisions() {
    return {Precision::fp32, Precision::bf16, Precision::bf16_fp32grad};
  }

  // --- shapes -------------------------------------------------------------------

  // The reference library's (tokens repeating; a third of the vocabulary
  // absent; all 150 positions one token; V = 1; T = 1; Zipf's long buckets
  // and singletons; V = 3000, most of dwte untouched), accumulated from
  // random values, and each of them again with each output overwritten from
  // poison (the Overwrite tests: 7 small shapes).
  static const std::vector<Shape>& shapes() { return llmk::reference::encoder::test_shapes(); }
  static const std::vector<Shape>& overwrite_shapes() { return shapes(); }
  // B = 0 (dwpe's T rows keep their values, or are zeroed), C = 0 (the
  // tokens still checked).
  static const std::vector<Shape>& empty_shapes() {
    return llmk::reference::encoder::empty_shapes();
  }
  // GPT-2 124M at llm.c's batch (B 8, T 1024, C 768, V 50257, Zipf tokens).
  static std::vector<Shape> large_shapes() { return {llmk::reference::encoder::gpt2_shape()}; }
  template <class Space>
  static std::string slow_reason(const std::string&, const Shape&) {
    return "";
  }
  static Shape nan_shape() { return {"nan", 2, 9, 24, 30}; }
  // 1041 positions in Zipf's buckets (a few long, many singletons).
  static Shape determinism_shape() { return {"det", 3, 347, 21, 400, Tokens::zipf}; }
  static std::vector<Shape> workspace_shapes() { return {{"ws", 3, 40, 6, 77, Tokens::zipf}}; }
  // B = 2, T = 3, C = 4, V = 5: extents in messages tell which size they are.
  static Shape bad_input_shape() { return {"bad", 2, 3, 4, 5}; }
  static Shape concurrency_shape(int i) {
    static const Shape shapes[] = {{"c0", 2, 50, 40, 97},
                                   {"c1", 3, 37, 17, 300, Tokens::zipf},
                                   {"c2", 1, 200, 33, 64, Tokens::same},
                                   {"c3", 2, 64, 24, 1000, Tokens::absent}};
    return shapes[i % 4];
  }

  // --- arguments, in the order of the entry points --------------------------------

  enum Arg : std::size_t { dwte, dwpe, dout, tokens };

  static std::vector<ArgSpec> args(const Shape& s, Precision p) {
    std::vector<ArgSpec> v = contract::spec_args<llmk::op::encoder_backward::Spec>(
        {{"B", s.B}, {"T", s.T}, {"C", s.C}, {"V", s.V}}, p);
    for (const Arg a : {dwpe, tokens}) v[a].alignment = Alignment::Element;
    v[tokens].int_limit = s.V;
    return v;
  }

  static std::vector<contract::Dim> dims(const Shape& s) {
    return {{"B", s.B}, {"T", s.T}, {"C", s.C}, {"V", s.V}};
  }

  // In the order the raw entry checks them (entry.cpp).
  static std::vector<contract::Overflow> overflows() {
    constexpr std::int64_t k20 = std::int64_t(1) << 20, k30 = std::int64_t(1) << 30,
                           k32 = std::int64_t(1) << 32, k40 = std::int64_t(1) << 40,
                           k61 = std::int64_t(1) << 61, k62 = std::int64_t(1) << 62;
    return {
        {{k32, k32, 4, 5}, "M = B·T"},          // 2⁶⁴ wraps int64 to 0
        {{k32 - 1, k32 + 1, 4, 5}, "M = B·T"},  // 2⁶⁴ − 1 wraps to −1
        {{k20, k20, k30, 5}, "M·C"},            // 2⁷⁰ elements of dout
        {{1, 1, k61, 1}, "M·C"},                // 2⁶¹ floats: fits int64, not a byte offset
        {{1, 1, 4, k62}, "V·C"},                // 2⁶⁴ elements of dwte
        {{0, k40, k30, 5}, "T·C"},              // no positions, a dwpe of 2⁷⁰ elements
    };
  }

  // --- problems and the reference ---------------------------------------------------

  static Problem make(const Shape& s, std::uint32_t seed, Precision p) {
    return llmk::reference::encoder::make_problem(s, seed, p);
  }

  template <class P>
  static auto& values(P& p, std::size_t arg) {
    switch (arg) {
      case dwte: return p.dwte;
      case dwpe: return p.dwpe;
      case dout: return p.dout;
    }
    throw std::out_of_range("encoder_backward's float arguments are dwte, dwpe and dout");
  }
  template <class P>
  static auto& int_values(P& p, std::size_t arg) {
    if (arg != tokens) throw std::out_of_range("encoder_backward's int32 argument is tokens");
    return p.tokens;
  }

  static std::vector<std::vector<double>> reference(const Problem& p,
                                                    const contract::Overwrites& o) {
    llmk::reference::encoder::Gradients64 g =
        llmk::reference::encoder::reference_backward(p, o[0], o[1]);
    return {std::move(g.dwte), std::move(g.dwpe)};
  }

  // Both outputs bf16 in bf16 only (bf16-fp32grad: float gradients).
  static double tolerance(Precision p, std::size_t) {
    return llmk::reference::encoder::tolerance(p, p == Precision::bf16);
  }

  // Within the tolerance (relative L2), and dwte's rows of the tokens absent
  // from p bitwise what `ref` has there: their initial values (+=) or 0 (=),
  // never touched.
  static ::testing::AssertionResult matches(const Problem& p, std::size_t output,
                                            const std::vector<float>& out,
                                            const std::vector<double>& ref, double scale) {
    const char* what = output == dwte ? "dwte" : "dwpe";
    const std::int64_t C = p.shape.C, V = p.shape.V;
    auto close = matches_reference(what, out, ref, C, scale * tolerance(p.precision, output));
    if (!close || output != dwte) return close;
    std::vector<bool> present(std::size_t(V), false);
    for (const int t : p.tokens) present[std::size_t(t)] = true;
    for (std::int64_t v = 0; v < V; ++v) {
      if (present[std::size_t(v)]) continue;
      for (std::int64_t c = 0; c < C; ++c) {
        const std::size_t i = std::size_t(v * C + c);
        const float want = float(ref[i]), got = out[i];
        if (std::memcmp(&got, &want, sizeof got) != 0)
          return ::testing::AssertionFailure()
                 << "dwte's row " << v << " (a token absent from tokens), channel " << c << ": "
                 << got << ", expected it untouched: " << want;
      }
    }
    return close;
  }

  // --- calls ------------------------------------------------------------------------

  static Options options(const std::string& impl, Precision, const contract::Overwrites& o) {
    Options options;
    options.impl = impl;
    options.dwte_update = contract::update(o[0]);
    options.dwpe_update = contract::update(o[1]);
    return options;
  }

  template <class Space>
  static std::size_t workspace_bytes(const Shape& s, const Options& options, Precision p) {
    return llmk::encoder_backward_workspace_bytes<Space>(s.B, s.T, s.C, s.V, options,
                                                         llmk::reference::precision_name(p));
  }

  // The tokens as a user's (B, T) view: llmk::TokensView.
  template <class Space>
  static llmk::TokensView<Space> tokens_view(const contract::IntArg& a) {
    if (a.extents.size() != 2) throw std::logic_error("encoder_backward's tokens are (B, T)");
    return llmk::TokensView<Space>(a.data, std::size_t(a.extents[0]), std::size_t(a.extents[1]));
  }

  template <class Target, class Space>
  static void call(Target& target, const std::vector<llmk::TensorRef<Space>>& out,
                   const std::vector<llmk::ConstTensorRef<Space>>& in,
                   const std::vector<contract::IntArg>& ints, const std::vector<std::int64_t>&,
                   const Options& options) {
    llmk::encoder_backward(target, out[0], out[1], in[0], tokens_view<Space>(ints[0]), options);
  }

  template <class Target>
  static void call_raw(Target& target, const std::vector<llmk::BufferRef>& out,
                       const std::vector<llmk::ConstBufferRef>& in,
                       const std::vector<const std::int32_t*>& ints,
                       const std::vector<std::int64_t>& dims, const Options& options) {
    llmk::encoder_backward(target, out[0], out[1], in[0], ints[0], dims[0], dims[1], dims[2],
                           dims[3], options);
  }
};

}  // namespace llmk_test
