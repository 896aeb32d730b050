// llmk::gelu_backward described to the contract tests
// (tests/contract/operation.hpp lists what an adapter provides): its
// implementations, precisions and shapes, its arguments in the order of its
// entry points, its reference library (llmk_gelu_backward_reference) and its
// calls.
#pragma once

#include "contract/operation.hpp"
#include "contract/spec_adapter.hpp"
#include "support/foreign_impls.hpp"

#include <llmk/gelu_backward.hpp>
#include <ops/gelu_backward/reference/problem.hpp>
#include <ops/gelu_backward/spec.hpp>
#include <ops/gelu_backward/reference/reference.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace llmk_test {

// An elementwise operation's arguments over GELU's shapes (B×T×C, N
// elements), from its declaration (GELU's backward and forward, the
// residual): through the rank-2 entry as (N, 1), the raw-pointer entry's
// view of its N elements, which its messages name (test_gelu_cases.cpp calls
// (M, C) views too); the raw entry's N, and its overflows.
template <class Spec>
struct ElementwiseArgs {
  static std::vector<contract::ArgSpec> args(const llmk::reference::gelu::Shape& s,
                                             llmk::reference::Precision p) {
    std::vector<contract::ArgSpec> v =
        contract::spec_args<Spec>({{"B", s.B}, {"T", s.T}, {"C", s.C}}, p);
    for (contract::ArgSpec& a : v) a.rank2 = {s.N(), 1};
    return v;
  }
  static std::vector<contract::Dim> dims(const llmk::reference::gelu::Shape& s) {
    return {{"N", s.N()}};
  }
  static std::vector<contract::Overflow> overflows() {
    constexpr std::int64_t k61 = std::int64_t(1) << 61;
    return {{{k61}, "1·N"}, {{2 * k61}, "1·N"}};  // 2⁶¹ floats: 2⁶³ bytes; 2⁶²: 2⁶⁴
  }
};

struct GeluBackwardContract : OperationAdapter<llmk::GeluBackward>,
                              ElementwiseArgs<llmk::op::gelu_backward::Spec> {
  using Shape = llmk::reference::gelu::Shape;
  using Problem = llmk::reference::gelu::HostProblem;
  using Options = llmk::GeluBackwardOptions;

  static std::string name() { return "gelu_backward"; }
  // Every element on its own: the same bits on every host space.
  static constexpr bool same_bits_on_host_spaces = true;

  static std::vector<Precision> precisions() { return {Precision::fp32, Precision::bf16}; }

  // --- shapes -------------------------------------------------------------------
  static std::vector<Shape> shapes() { return llmk::reference::gelu::test_shapes(); }
  static std::vector<Shape> overwrite_shapes() {
    return {{"one", 1, 1, 1}, {"odd", 3, 5, 7}, {"tail7", 1, 1, 1031}};
  }
  static const std::vector<Shape>& empty_shapes() {
    return llmk::reference::gelu::empty_shapes();
  }
  // GPT-2 124M's (B 8, T 1024, 4C = 3072: 25·10⁶ elements; 6-15 s a test on
  // 2 cores, 1558M's twice that: left to the reference's own test).
  static std::vector<Shape> large_shapes() { return {llmk::reference::gelu::gpt2_shapes()[0]}; }
  template <class Space>
  static std::string slow_reason(const std::string&, const Shape&) {
    return "";
  }
  static Shape nan_shape() { return {"nan", 2, 9, 24}; }
  static Shape determinism_shape() { return {"det", 3, 347, 201}; }
  // No implementation needs workspace (the tests skip where none does).
  static std::vector<Shape> workspace_shapes() { return {{"ws", 2, 129, 67}}; }
  // B = 2, T = 3, C = 4: extents in messages tell which size they are.
  static Shape bad_input_shape() { return {"bad", 2, 3, 4}; }
  static Shape concurrency_shape(int i) {
    static const Shape shapes[] = {
        {"c0", 2, 50, 40}, {"c1", 3, 37, 65}, {"c2", 1, 200, 33}, {"c3", 2, 64, 96}};
    return shapes[i % 4];
  }

  // --- arguments, in the order of the entry points --------------------------------

  enum Arg : std::size_t { dinp, dout, inp };  // spec.hpp's order

  // args, dims, overflows: ElementwiseArgs' (aligned arrays: the packs'
  // path; tests/test_gelu_cases.cpp moves each array off its alignment).

  // --- problems and the reference ---------------------------------------------------

  static Problem make(const Shape& s, std::uint32_t seed, Precision p) {
    return llmk::reference::gelu::make_problem(s, seed, p);
  }

  template <class P>
  static auto& values(P& p, std::size_t arg) {
    switch (arg) {
      case dinp: return p.dinp;
      case dout: return p.dout;
      case inp: return p.inp;
    }
    throw std::out_of_range("gelu_backward has 3 arguments");
  }

  static std::vector<std::vector<double>> reference(const Problem& p,
                                                    const contract::Overwrites& o) {
    return {llmk::reference::gelu::reference_backward(p, o[0])};
  }

  static double tolerance(Precision p, std::size_t) { return llmk::reference::gelu::tolerance(p); }

  // --- calls ------------------------------------------------------------------------

  static Options options(const std::string& impl, Precision, const contract::Overwrites& o) {
    Options options;
    options.impl = impl;
    options.dinp_update = contract::update(o[0]);
    return options;
  }

  template <class Space>
  static std::size_t workspace_bytes(const Shape& s, const Options& options, Precision p) {
    return llmk::gelu_backward_workspace_bytes<Space>(s.N(), options,
                                                      llmk::reference::precision_name(p));
  }

  template <class Target, class Space>
  static void call(Target& target, const std::vector<llmk::TensorRef<Space>>& out,
                   const std::vector<llmk::ConstTensorRef<Space>>& in, const Options& options) {
    llmk::gelu_backward(target, out[0], in[0], in[1], options);
  }

  template <class Target>
  static void call_raw(Target& target, const std::vector<llmk::BufferRef>& out,
                       const std::vector<llmk::ConstBufferRef>& in,
                       const std::vector<std::int64_t>& dims, const Options& options) {
    llmk::gelu_backward(target, out[0], in[0], in[1], dims[0], options);
  }
};

}  // namespace llmk_test
