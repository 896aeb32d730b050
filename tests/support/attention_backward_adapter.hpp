// llmk::attention_backward described to the contract tests
// (tests/contract/operation.hpp lists what an adapter provides): its
// implementations, precisions and shapes, its arguments in the order of its
// entry points, its reference library (llmk_attention_backward_reference)
// and its calls.
#pragma once

#include "contract/operation.hpp"
#include "contract/spec_adapter.hpp"
#include "support/foreign_impls.hpp"
#include "support/impl_params.hpp"

#include <llmk/attention_backward.hpp>
#include <llmk/layernorm_backward.hpp>  // the other operations' implementation names
#include <llmk/matmul_backward.hpp>
#include <ops/attention_backward/reference/compare.hpp>
#include <ops/attention_backward/reference/problem.hpp>
#include <ops/attention_backward/reference/reference.hpp>
#include <ops/attention_backward/spec.hpp>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace llmk_test {

struct AttentionBackwardContract : OperationAdapter<llmk::AttentionBackward> {
  using Shape = llmk::reference::attention::Shape;
  using Problem = llmk::reference::attention::HostProblem;
  using Options = llmk::AttentionBackwardOptions;

  static std::string name() { return "attention_backward"; }
  // "naive"'s sums depend on the sizes alone, but "materialized"'s GEMMs
  // split K over a host's threads (kernels/gemm_tiled_split.hpp): not the
  // same bits on every host space.
  static constexpr bool same_bits_on_host_spaces = false;

  static std::vector<Precision> precisions() {
    return {Precision::fp32, Precision::tf32, Precision::bf16};
  }

  // --- shapes -------------------------------------------------------------------

  // Every implementation × precision: the reference library's (T = 1, one
  // head, HS = 13, GPT-2's heads, T past one and two 128-row tiles).
  static const std::vector<Shape>& shapes() { return llmk::reference::attention::test_shapes(); }
  // Poisoned dqkv (overwritten): T = 1, small, HS odd, two tiles along T,
  // cublas's blocks of query rows in sequence groups.
  static std::vector<Shape> overwrite_shapes() {
    std::vector<Shape> v;
    for (const Shape& s : shapes())
      if (s.name == "T1" || s.name == "odd" || s.name == "HS13" || s.name == "T130" ||
          s.name == "blocks")
        v.push_back(s);
    return v;
  }
  static const std::vector<Shape>& empty_shapes() {
    return llmk::reference::attention::empty_shapes();
  }
  // GPT-2 124M's attention at T = 1024, one sequence (label `large`).
  static std::vector<Shape> large_shapes() {
    return {llmk::reference::attention::gpt2_shapes().front()};
  }
  // "naive" recomputes datt for every term (a factor HS more multiply-adds):
  // at T = 1024 on 2 CPU cores 30-60 s a call (Serial twice that).
  template <class Space>
  static std::string slow_reason(const std::string& impl, const Shape& s) {
    if (impl != "naive" || !is_host_space<Space> || s.T < 512) return {};
    return "naive on a CPU takes 30-60 s a call at T = 1024 here";
  }
  // att's element n/2 + 1 (where NanInputs plants its NaN) is (t 3, t' 1) of
  // head 1: in the causal part, which is read.
  static Shape nan_shape() { return {"nan", 1, 6, 6, 3}; }
  static Shape determinism_shape() { return {"det", 2, 67, 20, 4}; }
  static std::vector<Shape> workspace_shapes() { return {{"ws", 2, 33, 12, 3}}; }
  // B = 2, T = 3, C = 15, NH = 5 (HS = 3 = T, so that dout and att have the
  // same 90 elements: the contract shares memory between two inputs of one
  // size); extents in messages tell B, T, C and NH apart.
  static Shape bad_input_shape() { return {"bad", 2, 3, 15, 5}; }
  static Shape concurrency_shape(int i) {
    static const Shape shapes[] = {
        {"c0", 2, 20, 8, 2}, {"c1", 1, 33, 12, 3}, {"c2", 3, 9, 16, 4}, {"c3", 2, 16, 6, 1}};
    return shapes[i % 4];
  }

  // --- arguments, in the order of the entry points --------------------------------

  enum Arg : std::size_t { dqkv, dout, qkv, att };  // spec.hpp's order

  // att is (B, NH, T, T) through every entry; it fixes B, NH and T (spec.hpp).
  static std::vector<ArgSpec> args(const Shape& s, Precision p) {
    std::vector<ArgSpec> v = contract::spec_args<llmk::op::attention_backward::Spec>(
        {{"B", s.B}, {"T", s.T}, {"C", s.C}, {"NH", s.NH}}, storage(p));
    v[dqkv].alignment = v[qkv].alignment = Alignment::Element;
    return v;
  }

  static std::vector<contract::Dim> dims(const Shape& s) {
    return {{"B", s.B}, {"T", s.T}, {"C", s.C}, {"NH", s.NH}};
  }

  // In the order the entry checks them (entry.cpp's check_sizes).
  static std::vector<contract::Overflow> overflows() {
    constexpr std::int64_t k20 = std::int64_t(1) << 20, k31 = std::int64_t(1) << 31,
                           k32 = std::int64_t(1) << 32, k40 = std::int64_t(1) << 40,
                           k62 = std::int64_t(1) << 62;
    return {
        {{k32, k32, 4, 1}, "M = B·T"},            // 2⁶⁴ wraps int64 to 0
        {{1, 1, k62, 1}, "3C"},                   // 3·2⁶² wraps
        {{k20, k20, k20, 1}, "B·T·3C"},           // 3·2⁶⁰ elements of qkv
        {{1, k31, 3, 1}, "NH·T·T"},               // 2⁶² elements of att
        {{k20, k20, 4, 4}, "B·NH·T·T"},           // 2⁶² elements of att, per sequence 2⁴²
        // No sequences, so every array is empty, yet the sizes alone overflow:
        // refused on the per-sequence counts (the products above are 0).
        {{0, k40, 4, 4}, "NH·T·T"},
        {{0, 3, k62, 1}, "3C"},
    };
  }

  // --- problems and the reference ---------------------------------------------------

  static Problem make(const Shape& s, std::uint32_t seed, Precision p) {
    return llmk::reference::attention::make_problem(s, seed, p);
  }

  template <class P>
  static auto& values(P& p, std::size_t arg) {
    switch (arg) {
      case dqkv: return p.dqkv;
      case dout: return p.dout;
      case qkv: return p.qkv;
      case att: return p.att;
    }
    throw std::out_of_range("attention_backward has 4 arguments");
  }

  static std::vector<std::vector<double>> reference(const Problem& p,
                                                    const contract::Overwrites& o) {
    namespace at = llmk::reference::attention;
    return {at::reference_backward(p, o[0], at::Masking::Causal)};
  }
  // The most NaN a result may have: the products over all of T, the masked
  // terms 0 (a dense GEMM's), which carry 0 · NaN (llmk/attention_backward.hpp).
  static std::vector<std::vector<double>> nan_bound(const Problem& p,
                                                    const contract::Overwrites& o) {
    namespace at = llmk::reference::attention;
    return {at::reference_backward(p, o[0], at::Masking::Dense)};
  }

  static double tolerance(Precision p, std::size_t) {
    return llmk::reference::attention::tolerance(p);
  }

  // --- calls ------------------------------------------------------------------------

  static Options options(const std::string& impl, Precision p, const contract::Overwrites& o) {
    Options options;
    options.impl = impl;
    options.math = math(p);
    options.dqkv_update = contract::update(o[0]);
    return options;
  }

  template <class Space>
  static std::size_t workspace_bytes(const Shape& s, const Options& options, Precision p) {
    return llmk::attention_backward_workspace_bytes<Space>(s.B, s.T, s.C, s.NH, options,
                                                           config(p));
  }

  template <class Target, class Space>
  static void call(Target& target, const std::vector<llmk::TensorRef<Space>>& out,
                   const std::vector<llmk::ConstTensorRef<Space>>& in, const Options& options) {
    llmk::attention_backward(target, out[0], in[0], in[1], in[2], options);
  }

  template <class Target>
  static void call_raw(Target& target, const std::vector<llmk::BufferRef>& out,
                       const std::vector<llmk::ConstBufferRef>& in,
                       const std::vector<std::int64_t>& dims, const Options& options) {
    llmk::attention_backward(target, out[0], in[0], in[1], in[2], dims[0], dims[1], dims[2],
                             dims[3], options);
  }
};

}  // namespace llmk_test
