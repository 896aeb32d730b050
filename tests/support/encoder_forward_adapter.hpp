// llmk::encoder_forward described to the contract tests
// (tests/contract/operation.hpp lists what an adapter provides): the encoder
// backward's shapes (support/encoder_backward_adapter.hpp: the same sizes, tokens
// drawn alike), its arguments from its declaration (tokens an int32 input,
// valid in [0, V)), its float64 reference (ops/encoder_forward/reference.hpp).
#pragma once

#include "contract/operation.hpp"
#include "contract/spec_adapter.hpp"
#include "support/encoder_backward_adapter.hpp"
#include "support/foreign_impls.hpp"

#include <llmk/encoder_forward.hpp>
#include <ops/encoder_forward/reference.hpp>
#include <ops/encoder_forward/spec.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace llmk_test {

struct EncoderForwardContract : OperationAdapter<llmk::EncoderForward>,
                                ShapesOf<EncoderBackwardContract> {
  using Shape = llmk::reference::encoder::Shape;
  using Problem = llmk::reference::encoder_forward::HostProblem;
  using Options = llmk::EncoderForwardOptions;
  using Spec = llmk::op::encoder_forward::Spec;

  static std::string name() { return "encoder_forward"; }
  static constexpr bool same_bits_on_host_spaces = true;  // every element on its own
  // Its inputs: int32 tokens, and wte and wpe of different sizes at every
  // bad-input shape (V 5, T 3): no pair to share.
  static constexpr bool no_two_inputs_alike = true;
  static std::vector<Precision> precisions() { return {Precision::fp32, Precision::bf16}; }

  // --- arguments: out, tokens, wte, wpe ------------------------------------------------
  static std::vector<ArgSpec> args(const Shape& s, Precision p) {
    std::vector<ArgSpec> v =
        contract::spec_args<Spec>({{"B", s.B}, {"T", s.T}, {"C", s.C}, {"V", s.V}}, p);
    for (const auto a : {Spec::tokens, Spec::wpe}) v[a].alignment = Alignment::Element;
    v[Spec::tokens].int_limit = s.V;
    return v;
  }
  // NanInputs plants NaN in the middle of wte (row V / 2) and of wpe: V = 3,
  // so that the 18 positions hold every token and row 1's NaN reaches out.
  static Shape nan_shape() { return {"nan", 2, 9, 24, 3}; }
  static std::vector<contract::Dim> dims(const Shape& s) {
    return EncoderBackwardContract::dims(s);
  }
  // The raw entry checks the same products as the backward's, in the same
  // order and with the same names (out for dout, wte for dwte, wpe for dwpe).
  static std::vector<contract::Overflow> overflows() {
    return EncoderBackwardContract::overflows();
  }

  // --- problems and the reference ---------------------------------------------------
  static Problem make(const Shape& s, std::uint32_t seed, Precision p) {
    return llmk::reference::encoder_forward::make_problem(s, seed, p);
  }
  template <class P>
  static auto& values(P& p, std::size_t arg) {
    switch (arg) {
      case Spec::out: return p.out;
      case Spec::wte: return p.wte;
      case Spec::wpe: return p.wpe;
    }
    throw std::out_of_range("encoder_forward's float arguments are out, wte and wpe");
  }
  template <class P>
  static auto& int_values(P& p, std::size_t arg) {
    if (arg != Spec::tokens) throw std::out_of_range("encoder_forward's int32 argument is tokens");
    return p.tokens;
  }
  static std::vector<std::vector<double>> reference(const Problem& p,
                                                    const contract::Overwrites& o) {
    return {llmk::reference::encoder_forward::reference_forward(p, o[0])};
  }
  static double tolerance(Precision p, std::size_t) {
    return llmk::reference::encoder_forward::tolerance(p);
  }

  // --- calls (options: OperationAdapter's, out = or +=) ---------------------------------
  template <class Space>
  static std::size_t workspace_bytes(const Shape& s, const Options& options, Precision p) {
    return llmk::encoder_forward_workspace_bytes<Space>(s.B, s.T, s.C, s.V, options,
                                                        llmk::reference::precision_name(p));
  }
  template <class Target, class Space>
  static void call(Target& target, const std::vector<llmk::TensorRef<Space>>& out,
                   const std::vector<llmk::ConstTensorRef<Space>>& in,
                   const std::vector<contract::IntArg>& ints, const std::vector<std::int64_t>&,
                   const Options& options) {
    llmk::encoder_forward(target, out[0], EncoderBackwardContract::tokens_view<Space>(ints[0]),
                          in[0], in[1], options);
  }
  template <class Target>
  static void call_raw(Target& target, const std::vector<llmk::BufferRef>& out,
                       const std::vector<llmk::ConstBufferRef>& in,
                       const std::vector<const std::int32_t*>& ints,
                       const std::vector<std::int64_t>& dims, const Options& options) {
    llmk::encoder_forward(target, out[0], ints[0], in[0], in[1], dims[0], dims[1], dims[2],
                          dims[3], options);
  }
};

}  // namespace llmk_test
