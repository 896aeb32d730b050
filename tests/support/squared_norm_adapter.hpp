// llmk::squared_norm described to the contract tests
// (tests/contract/operation.hpp lists what an adapter provides): N = A·B
// values, a vector through the rank-1 entry and an A × B matrix through the
// rank-2 one, across its chunks (8192 values); its arguments from its
// declaration (out: one float), its float64 reference
// (ops/squared_norm/reference.hpp).
#pragma once

#include "contract/operation.hpp"
#include "contract/spec_adapter.hpp"
#include "support/foreign_impls.hpp"

#include <llmk/squared_norm.hpp>
#include <ops/squared_norm/reference.hpp>
#include <ops/squared_norm/spec.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace llmk_test {

struct SquaredNormContract : OperationAdapter<llmk::SquaredNorm> {
  using Shape = llmk::reference::squared_norm::Shape;
  using Problem = llmk::reference::squared_norm::HostProblem;
  using Options = llmk::SquaredNormOptions;
  using Spec = llmk::op::squared_norm::Spec;

  static std::string name() { return "squared_norm"; }
  static constexpr bool same_bits_on_host_spaces = true;  // chunks fixed by N
  static std::vector<Precision> precisions() { return {Precision::fp32, Precision::bf16}; }
  static constexpr bool no_two_inputs_alike = true;  // one input

  // --- shapes: one chunk, several, a last one short ----------------------------------
  static std::vector<Shape> shapes() {
    return {{"one", 1, 1}, {"odd", 3, 5}, {"tail", 1, 1031}, {"chunks", 3, 8193}};
  }
  static std::vector<Shape> overwrite_shapes() { return {{"odd", 3, 5}, {"chunks", 3, 8193}}; }
  static std::vector<Shape> empty_shapes() { return {{"A0", 0, 7}, {"B0", 5, 0}}; }
  // GPT-2 124M's gradients, all of them (llm.c's count, Vp = 50304).
  static std::vector<Shape> large_shapes() { return {{"gpt2", 1, 124475904}}; }
  template <class Space>
  static std::string slow_reason(const std::string&, const Shape&) {
    return "";
  }
  static Shape nan_shape() { return {"nan", 3, 24}; }
  static Shape determinism_shape() { return {"det", 37, 2011}; }
  static std::vector<Shape> workspace_shapes() { return {{"ws", 5, 8191}}; }
  static Shape bad_input_shape() { return {"bad", 2, 3}; }
  static Shape concurrency_shape(int i) {
    static const Shape shapes[] = {{"c0", 50, 400}, {"c1", 37, 650}, {"c2", 200, 33}, {"c3", 4, 9600}};
    return shapes[i % 4];
  }

  // --- arguments: out, inp -------------------------------------------------------------
  static std::vector<ArgSpec> args(const Shape& s, Precision p) {
    return contract::spec_args<Spec>({{"B", s.A}, {"T", s.B}}, p);
  }
  static std::vector<contract::Dim> dims(const Shape& s) { return {{"N", s.N()}}; }
  static std::vector<contract::Overflow> overflows() {
    constexpr std::int64_t k61 = std::int64_t(1) << 61;
    return {{{k61}, "1·N"}, {{2 * k61}, "1·N"}};  // 2⁶¹ floats: 2⁶³ bytes; 2⁶²: 2⁶⁴
  }

  // --- problems and the reference ---------------------------------------------------
  static Problem make(const Shape& s, std::uint32_t seed, Precision p) {
    return llmk::reference::squared_norm::make_problem(s, seed, p);
  }
  template <class P>
  static auto& values(P& p, std::size_t arg) {
    return arg == Spec::out ? p.out : p.inp;
  }
  static std::vector<std::vector<double>> reference(const Problem& p,
                                                    const contract::Overwrites& o) {
    return {llmk::reference::squared_norm::reference_sum(p, o[0])};
  }
  static double tolerance(Precision p, std::size_t) {
    return llmk::reference::squared_norm::tolerance(p);
  }

  // --- calls (options: OperationAdapter's, out = or +=) ---------------------------------
  template <class Space>
  static std::size_t workspace_bytes(const Shape& s, const Options& options, Precision p) {
    return llmk::squared_norm_workspace_bytes<Space>(s.N(), options,
                                                     llmk::reference::precision_name(p));
  }
  template <class Target, class Space>
  static void call(Target& target, const std::vector<llmk::TensorRef<Space>>& out,
                   const std::vector<llmk::ConstTensorRef<Space>>& in, const Options& options) {
    llmk::squared_norm(target, out[0], in[0], options);
  }
  template <class Target>
  static void call_raw(Target& target, const std::vector<llmk::BufferRef>& out,
                       const std::vector<llmk::ConstBufferRef>& in,
                       const std::vector<std::int64_t>& dims, const Options& options) {
    llmk::squared_norm(target, static_cast<float*>(out[0].data), in[0], dims[0], options);
  }
};

}  // namespace llmk_test
