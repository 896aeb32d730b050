// llmk::layernorm_backward described to the contract tests
// (tests/contract/operation.hpp lists what an adapter provides): its
// implementations, precisions and shapes, its arguments in the order of its
// entry points, its reference library (llmk_layernorm_backward_reference)
// and its calls.
#pragma once

#include "contract/operation.hpp"
#include "contract/spec_adapter.hpp"
#include "support/foreign_impls.hpp"

#include <llmk/layernorm_backward.hpp>
#include <ops/layernorm_backward/reference/compare.hpp>
#include <ops/layernorm_backward/reference/problem.hpp>
#include <ops/layernorm_backward/reference/reference.hpp>
#include <ops/layernorm_backward/spec.hpp>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace llmk_test {

struct LayernormBackwardContract : OperationAdapter<llmk::LayernormBackward> {
  using Shape = llmk::reference::layernorm::Shape;
  using Problem = llmk::reference::layernorm::HostProblem;
  using Options = llmk::LayernormBackwardOptions;

  static std::string name() { return "layernorm_backward"; }
  // Its column sums are added in an order fixed by M and C alone, its row
  // sums by C (llmk/layernorm_backward.hpp): the same bits on every host
  // space, whatever its thread count.
  static constexpr bool same_bits_on_host_spaces = true;

  static std::vector<Precision> precisions() {
    return {Precision::fp32, Precision::bf16, Precision::bf16_fp32grad};
  }

  // --- shapes -------------------------------------------------------------------
  // (The blocked implementation's plan, ops/layernorm_backward/kernels.hpp: teams
  // of 64 rows, up to 4096 of them, in sub-blocks of 16 rows on a host, 8 on
  // Cuda.)

  // Every implementation × precision: the reference library's (C = 1, odd,
  // packs of 4 but not 8, GPT-2's C, 2100 rows, one row, no bias, C = 1600,
  // C = 3073), and a few blocks of rows whose last one ends in a partial
  // sub-block (205 rows: 3 blocks of 64 and one of 13), once with C = 520.
  static std::vector<Shape> shapes() {
    std::vector<Shape> v = llmk::reference::layernorm::test_shapes();
    v.push_back({"blocks", 5, 41, 67});
    // On a GPU, C a multiple of every pack runs rows in registers: blocks of
    // 32 rows, the last of 13; C = 520 leaves lanes of a row's last pack idle.
    v.push_back({"rows", 5, 41, 520});
    return v;
  }
  // Shapes whose row arrays (dinp, inp) start on their allocation (16-byte
  // aligned: every GPU kernel's vector path runs, Cuda's "warp_rows" and
  // "blocked"'s rows in registers among them); the others start an element
  // past it, which those paths refuse (their element-wise fallbacks run).
  static bool rows_aligned(const Shape& s) {
    for (const char* name : {"gpt2", "C36", "C1600", "rows", "c3", "ws64"})
      if (s.name == name) return true;
    return false;
  }
  // Poisoned outputs: C = 1 (dinp is 0), several blocks with a partial last
  // one (longM: 33 blocks, the last of 52 rows), no bias, and the GPU's
  // vector paths (rows: aligned, C = 520).
  static std::vector<Shape> overwrite_shapes() {
    std::vector<Shape> v;
    for (const Shape& s : shapes())
      if (s.name == "C1" || s.name == "odd" || s.name == "longM" || s.name == "nobias" ||
          s.name == "rows")
        v.push_back(s);
    return v;
  }
  static const std::vector<Shape>& empty_shapes() {
    return llmk::reference::layernorm::empty_shapes();
  }
  static std::vector<Shape> large_shapes() { return llmk::reference::layernorm::gpt2_shapes(); }
  // Every implementation runs GPT-2's shapes in seconds, on any space.
  template <class Space>
  static std::string slow_reason(const std::string&, const Shape&) {
    return "";
  }
  static Shape nan_shape() { return {"nan", 2, 9, 24}; }
  // 1041 rows: 16 blocks of 64 and one of 17 (a sub-block of one row); C odd.
  static Shape determinism_shape() { return {"det", 3, 347, 201}; }
  // C = 67 (the element-wise paths) and 64 (aligned: the GPU's vector paths).
  static std::vector<Shape> workspace_shapes() { return {{"ws", 2, 129, 67}, {"ws64", 2, 129, 64}}; }
  // B = 2, T = 3, C = 4 (M = 6): extents in messages tell which size they are.
  static Shape bad_input_shape() { return {"bad", 2, 3, 4}; }
  static Shape concurrency_shape(int i) {
    static const Shape shapes[] = {
        {"c0", 2, 50, 40}, {"c1", 3, 37, 65}, {"c2", 1, 200, 33}, {"c3", 2, 64, 96}};
    return shapes[i % 4];
  }

  // --- arguments, in the order of the entry points --------------------------------

  enum Arg : std::size_t { dinp, dweight, dbias, dout, inp, weight, mean, rstd };

  static std::vector<ArgSpec> args(const Shape& s, Precision p) {
    std::vector<ArgSpec> v = contract::spec_args<llmk::op::layernorm_backward::Spec>(
        {{"B", s.B}, {"T", s.T}, {"C", s.C}}, p);
    v[dbias].present = s.bias;
    for (const Arg a : {dinp, inp})
      v[a].alignment = rows_aligned(s) ? Alignment::Allocation : Alignment::Element;
    for (const Arg a : {dbias, mean}) v[a].alignment = Alignment::Element;
    return v;
  }

  static std::vector<contract::Dim> dims(const Shape& s) {
    return {{"B", s.B}, {"T", s.T}, {"C", s.C}};
  }

  static std::vector<contract::Overflow> overflows() {
    constexpr std::int64_t k20 = std::int64_t(1) << 20, k30 = std::int64_t(1) << 30,
                           k32 = std::int64_t(1) << 32, k61 = std::int64_t(1) << 61;
    return {
        {{k32, k32, 4}, "M = B·T"},          // 2⁶⁴ wraps int64 to 0
        {{k32 - 1, k32 + 1, 4}, "M = B·T"},  // 2⁶⁴ − 1 wraps to −1
        {{k20, k20, k30}, "M·C"},            // 2⁷⁰ elements
        {{1, 1, k61}, "M·C"},                // 2⁶¹ floats: fits int64, not a byte offset
        // No rows, but weight, dweight and dbias of 2⁶¹ and 2⁶² elements:
        // refused on C alone (M·C is 0 here). Found by these cases: C was
        // once unchecked, and C = 2⁶² (2⁶⁴ bytes: spans wrapped to 0) was
        // accepted, its overwritten dweight's zero fill dying in Kokkos.
        {{0, 3, k61}, "1·C"},
        {{0, 3, 2 * k61}, "1·C"},
    };
  }

  // --- problems and the reference ---------------------------------------------------

  static Problem make(const Shape& s, std::uint32_t seed, Precision p) {
    return llmk::reference::layernorm::make_problem(s, seed, p);
  }

  template <class P>
  static auto& values(P& p, std::size_t arg) {
    switch (arg) {
      case dinp: return p.dinp;
      case dweight: return p.dweight;
      case dbias: return p.dbias;
      case dout: return p.dout;
      case inp: return p.inp;
      case weight: return p.weight;
      case mean: return p.mean;
      case rstd: return p.rstd;
    }
    throw std::out_of_range("layernorm_backward has 8 arguments");
  }

  static std::vector<std::vector<double>> reference(const Problem& p,
                                                    const contract::Overwrites& o) {
    llmk::reference::layernorm::Gradients64 g =
        llmk::reference::layernorm::reference_backward(p, {o[0], o[1], o[2]});
    return {std::move(g.dinp), std::move(g.dweight), std::move(g.dbias)};
  }

  static double tolerance(Precision p, std::size_t output) {
    return llmk::reference::layernorm::tolerance(p, llmk::reference::Output(output));
  }

  // --- calls ------------------------------------------------------------------------

  static Options options(const std::string& impl, Precision, const contract::Overwrites& o) {
    Options options;
    options.impl = impl;
    options.dinp_update = contract::update(o[0]);
    options.dweight_update = contract::update(o[1]);
    options.dbias_update = contract::update(o[2]);
    return options;
  }

  template <class Space>
  static std::size_t workspace_bytes(const Shape& s, const Options& options, Precision p) {
    return llmk::layernorm_backward_workspace_bytes<Space>(s.M(), s.C, s.bias, options,
                                                           llmk::reference::precision_name(p));
  }

  template <class Target, class Space>
  static void call(Target& target, const std::vector<llmk::TensorRef<Space>>& out,
                   const std::vector<llmk::ConstTensorRef<Space>>& in, const Options& options) {
    llmk::layernorm_backward(target, out[0], out[1], out[2], in[0], in[1], in[2], in[3], in[4],
                             options);
  }

  template <class Target>
  static void call_raw(Target& target, const std::vector<llmk::BufferRef>& out,
                       const std::vector<llmk::ConstBufferRef>& in,
                       const std::vector<std::int64_t>& dims, const Options& options) {
    llmk::layernorm_backward(target, out[0], out[1], out[2], in[0], in[1], in[2],
                             static_cast<const float*>(in[3].data),
                             static_cast<const float*>(in[4].data), dims[0], dims[1], dims[2],
                             options);
  }
};

}  // namespace llmk_test
