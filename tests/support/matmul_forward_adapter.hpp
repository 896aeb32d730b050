// llmk::matmul_forward described to the contract tests
// (tests/contract/operation.hpp lists what an adapter provides): the matmul
// backward's shapes and variants (without GELU, and with pre_gelu), one
// longer sum over C, its arguments from its declaration, its float64
// reference (ops/matmul_forward/reference.hpp).
#pragma once

#include "contract/operation.hpp"
#include "contract/spec_adapter.hpp"
#include "support/foreign_impls.hpp"
#include "support/matmul_backward_adapter.hpp"

#include <llmk/matmul_forward.hpp>
#include <ops/matmul_forward/reference.hpp>
#include <ops/matmul_forward/spec.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace llmk_test {

struct MatmulForwardContract : OperationAdapter<llmk::MatmulForward>,
                               ShapesOf<MatmulBackwardContract> {
  using Shapes = MatmulBackwardContract;
  using Shape = Shapes::Shape;
  // The reference's problem of the shape (with its GELU variant) and precision.
  struct Problem {
    Shape shape;
    Precision precision = Precision::fp32;
    llmk::reference::matmul_forward::HostProblem host;
  };
  using Options = llmk::MatmulForwardOptions;
  using Spec = llmk::op::matmul_forward::Spec;

  static std::string name() { return "matmul_forward"; }
  // tiled's host split-K splits a product over the space's threads.
  static constexpr bool same_bits_on_host_spaces = false;
  // inp (M×C), weight (OC×C) and bias (OC) differ in size at every shape
  // the bad-input tests use (M 6, C 4, OC 5): no pair to share.
  static constexpr bool no_two_inputs_alike = true;
  static std::vector<Precision> precisions() { return {Precision::fp32, Precision::bf16}; }
  static std::vector<std::string> variants() { return Shapes::variants(); }
  static Shape in_variant(const Shape& s, const std::string& v) { return Shapes::in_variant(s, v); }
  // The backward's, and GPT-2's longest forward sum (fcproj: C = 3072).
  static std::vector<Shape> shapes() {
    std::vector<Shape> v = Shapes::shapes();
    v.push_back(Shapes::shape({"longC3k", 1, 5, 3072, 7}));
    return v;
  }

  // --- arguments: out, pre_gelu, inp, weight, bias -------------------------------------
  static std::vector<ArgSpec> args(const Shape& s, Precision p) {
    std::vector<ArgSpec> v =
        contract::spec_args<Spec>({{"B", s.B}, {"T", s.T}, {"C", s.C}, {"OC", s.OC}}, p);
    v[Spec::pre_gelu].present = s.gelu;
    v[Spec::bias].present = s.bias;
    for (const auto a : {Spec::out, Spec::bias}) v[a].alignment = Alignment::Element;
    return v;
  }
  static std::vector<contract::Dim> dims(const Shape& s) { return Shapes::dims(s); }
  static std::vector<contract::Overflow> overflows() {
    constexpr std::int64_t k20 = std::int64_t(1) << 20, k30 = std::int64_t(1) << 30,
                           k32 = std::int64_t(1) << 32, k61 = std::int64_t(1) << 61;
    return {
        {{k32, k32, 4, 5}, "M = B·T"},                             // 2⁶⁴ wraps int64 to 0
        {{k20, k20, k30, 5}, "elements of inp, M·C"},              // 2⁷⁰
        {{k20, k20, 4, k30}, "elements of out and pre_gelu, M·OC"},  // 2⁷⁰
        {{1, 1, k32, k32}, "elements of weight, OC·C"},            // 2⁶⁴: wraps to 0
        {{1, 1, k61, 1}, "M·C"},  // 2⁶¹ floats: fits int64, not a byte offset
        {{0, 3, 0, k61}, "1·OC"},  // no rows, no C: the bias alone
    };
  }

  // --- problems and the reference ---------------------------------------------------
  static Problem make(const Shape& s, std::uint32_t seed, Precision p) {
    return {s, p, llmk::reference::matmul_forward::make_problem(s, s.gelu, seed, p)};
  }
  template <class P>
  static auto& values(P& p, std::size_t arg) {
    switch (arg) {
      case Spec::out: return p.host.out;
      case Spec::pre_gelu: return p.host.pre_gelu;
      case Spec::inp: return p.host.inp;
      case Spec::weight: return p.host.weight;
      case Spec::bias: return p.host.bias;
    }
    throw std::out_of_range("matmul_forward has 5 arguments");
  }
  // (pre_gelu is written whatever the update: only out's matters.)
  static std::vector<std::vector<double>> reference(const Problem& p,
                                                    const contract::Overwrites& o) {
    return llmk::reference::matmul_forward::reference_forward(p.host, o[0]);
  }
  static double tolerance(Precision p, std::size_t k) {
    return llmk::reference::matmul_forward::tolerance(p, k);
  }

  // --- calls (options: OperationAdapter's, out = or +=) ---------------------------------
  template <class Space>
  static std::size_t workspace_bytes(const Shape& s, const Options& options, Precision p) {
    return llmk::matmul_forward_workspace_bytes<Space>(s.M(), s.C, s.OC, s.gelu, options,
                                                       llmk::reference::precision_name(p));
  }
  template <class Target, class Space>
  static void call(Target& target, const std::vector<llmk::TensorRef<Space>>& out,
                   const std::vector<llmk::ConstTensorRef<Space>>& in, const Options& options) {
    llmk::matmul_forward(target, out[0], out[1], in[0], in[1], in[2], options);
  }
  template <class Target>
  static void call_raw(Target& target, const std::vector<llmk::BufferRef>& out,
                       const std::vector<llmk::ConstBufferRef>& in,
                       const std::vector<std::int64_t>& dims, const Options& options) {
    llmk::matmul_forward(target, out[0], out[1], in[0], in[1], in[2], dims[0], dims[1], dims[2],
                         dims[3], options);
  }
};

}  // namespace llmk_test
