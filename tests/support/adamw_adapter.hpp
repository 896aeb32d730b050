// llmk::adamw described to the contract tests (tests/contract/operation.hpp
// lists what an adapter provides): N = A·B parameters, a vector through the
// rank-1 entry and an A × B matrix through the rank-2 one, without and with
// master weights (the variant "master"); its arguments from its declaration
// (params, m, v and master inout: never poisoned), its float64 reference
// (ops/adamw/reference.hpp) at its test hyperparameters.
#pragma once

#include "contract/operation.hpp"
#include "contract/spec_adapter.hpp"
#include "support/foreign_impls.hpp"

#include <llmk/adamw.hpp>
#include <ops/adamw/reference.hpp>
#include <ops/adamw/spec.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace llmk_test {

struct AdamWContract : OperationAdapter<llmk::AdamW> {
  using Shape = llmk::reference::adamw::Shape;
  using Problem = llmk::reference::adamw::HostProblem;
  using Options = llmk::AdamWOptions;
  using Spec = llmk::op::adamw::Spec;

  static std::string name() { return "adamw"; }
  static constexpr bool same_bits_on_host_spaces = true;  // every element on its own
  static std::vector<Precision> precisions() {
    return {Precision::fp32, Precision::bf16, Precision::bf16_fp32grad};
  }
  static constexpr bool no_two_inputs_alike = true;  // one input
  static std::vector<std::string> variants() { return {"", "master"}; }
  static Shape in_variant(Shape s, const std::string& variant) {
    s.master = variant == "master";
    return s;
  }

  // --- shapes: across the host blocks (4096) and a GPU's blocks ---------------------
  static std::vector<Shape> shapes() {
    return {{"one", 1, 1}, {"odd", 3, 5}, {"tail", 1, 1031}, {"blocks", 7, 1301}};
  }
  static std::vector<Shape> overwrite_shapes() { return {{"odd", 3, 5}}; }
  static std::vector<Shape> empty_shapes() { return {{"A0", 0, 7}, {"B0", 5, 0}}; }
  // GPT-2 124M's token embedding, its largest tensor (Vp 50304 × C 768).
  static std::vector<Shape> large_shapes() { return {{"gpt2_wte", 50304, 768}}; }
  template <class Space>
  static std::string slow_reason(const std::string&, const Shape&) {
    return "";
  }
  static Shape nan_shape() { return {"nan", 3, 24}; }
  static Shape determinism_shape() { return {"det", 37, 201}; }
  static std::vector<Shape> workspace_shapes() { return {{"ws", 5, 67}}; }
  static Shape bad_input_shape() { return {"bad", 2, 3}; }
  static Shape concurrency_shape(int i) {
    static const Shape shapes[] = {{"c0", 50, 40}, {"c1", 37, 65}, {"c2", 200, 33}, {"c3", 64, 96}};
    return shapes[i % 4];
  }

  // --- arguments: params, grads, m, v, master -----------------------------------------
  static std::vector<ArgSpec> args(const Shape& s, Precision p) {
    std::vector<ArgSpec> v =
        contract::spec_args<Spec>({{"B", s.A}, {"T", s.B}}, p);
    v[Spec::master].present = s.master;
    return v;
  }
  static std::vector<contract::Dim> dims(const Shape& s) { return {{"N", s.N()}}; }
  static std::vector<contract::Overflow> overflows() {
    constexpr std::int64_t k61 = std::int64_t(1) << 61;
    return {{{k61}, "1·N"}, {{2 * k61}, "1·N"}};  // 2⁶¹ floats: 2⁶³ bytes; 2⁶²: 2⁶⁴
  }

  // --- problems and the reference ---------------------------------------------------
  static Problem make(const Shape& s, std::uint32_t seed, Precision p) {
    return llmk::reference::adamw::make_problem(s, seed, p);
  }
  template <class P>
  static auto& values(P& p, std::size_t arg) {
    switch (arg) {
      case Spec::params: return p.params;
      case Spec::grads: return p.grads;
      case Spec::m: return p.m;
      case Spec::v: return p.v;
      case Spec::master: return p.master;
    }
    throw std::out_of_range("adamw has 5 arguments");
  }
  // params, m, v, master (the outputs in argument order).
  static std::vector<std::vector<double>> reference(const Problem& p, const contract::Overwrites&) {
    return llmk::reference::adamw::reference_step(p);
  }
  static double tolerance(Precision p, std::size_t output) {
    return llmk::reference::adamw::tolerance(p, output == 0);
  }

  // --- calls at the problems' hyperparameters (make_problem's) -----------------------
  template <class Space>
  static std::size_t workspace_bytes(const Shape& s, const Options& options, Precision p) {
    return llmk::adamw_workspace_bytes<Space>(s.N(), options, llmk::reference::precision_name(p));
  }
  template <class Target, class Space>
  static void call(Target& target, const std::vector<llmk::TensorRef<Space>>& out,
                   const std::vector<llmk::ConstTensorRef<Space>>& in, const Options& options) {
    llmk::adamw(target, out[0], in[0], out[1], out[2], out[3],
                llmk::reference::adamw::test_hyperparams(), options);
  }
  template <class Target>
  static void call_raw(Target& target, const std::vector<llmk::BufferRef>& out,
                       const std::vector<llmk::ConstBufferRef>& in,
                       const std::vector<std::int64_t>& dims, const Options& options) {
    const auto f32 = [](const llmk::BufferRef& b) { return static_cast<float*>(b.data); };
    llmk::adamw(target, out[0], in[0], f32(out[1]), f32(out[2]), f32(out[3]), dims[0],
                llmk::reference::adamw::test_hyperparams(), options);
  }
};

}  // namespace llmk_test
