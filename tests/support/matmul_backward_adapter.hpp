// llmk::matmul_backward described to the contract tests
// (tests/contract/operation.hpp lists what an adapter provides): its
// implementations, precisions (tf32: float arrays, Math::tf32) and shapes, its
// variants (without GELU, and with pre_gelu: GELU's backward fused into dinp),
// its arguments in the order of its entry points, its reference library
// (llmk_matmul_backward_reference, through support/problem.hpp) and its calls.
#pragma once

#include <algorithm>
#include <cstdint>
#include <llmk/layernorm_backward.hpp>  // the other operation's implementation names
#include <llmk/matmul_backward.hpp>
#include <ops/matmul_backward/spec.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "contract/operation.hpp"
#include "contract/spec_adapter.hpp"
#include "support/foreign_impls.hpp"
#include "support/impl_params.hpp"
#include "support/problem.hpp"

namespace llmk_test {

struct MatmulBackwardContract : OperationAdapter<llmk::MatmulBackward> {
  // The reference library's shape, and whether the call has pre_gelu (the
  // "gelu" variant).
  struct Shape : llmk::reference::Shape {
    bool gelu = false;
  };
  // The reference library's problem of that shape and precision.
  struct Problem {
    Shape shape;
    Precision precision = Precision::fp32;
    llmk::reference::HostProblem host;
  };
  using Options = llmk::MatmulBackwardOptions;

  static std::string name() { return "matmul_backward"; }
  // tiled's host split-K splits a product over the space's threads: OpenMP's
  // sums are added in another order than Serial's.
  static constexpr bool same_bits_on_host_spaces = false;

  static std::vector<Precision> precisions() {
    return {Precision::fp32, Precision::tf32, Precision::bf16, Precision::bf16_fp32grad};
  }

  // --- variants and shapes -------------------------------------------------------

  static std::vector<std::string> variants() { return {"", "gelu"}; }
  static Shape in_variant(Shape s, const std::string& variant) {
    s.gelu = variant == "gelu";
    return s;
  }

  static Shape shape(const llmk::reference::Shape& s) {
    Shape v;
    static_cast<llmk::reference::Shape&>(v) = s;
    return v;
  }
  static std::vector<Shape> shapes_of(const std::vector<llmk::reference::Shape>& list) {
    std::vector<Shape> v;
    for (const llmk::reference::Shape& s : list) v.push_back(shape(s));
    return v;
  }

  // Every implementation × precision × variant: accuracy_shapes()
  // (support/problem.hpp: odd sizes, partial blocks, long sums over M = 2100
  // rows and OC = 2050 columns, OC = 50257, C = 1, M = 1, no bias, C = 0).
  static std::vector<Shape> shapes() { return shapes_of(accuracy_shapes()); }
  // Poisoned outputs: small primes, partial blocks and chunks, no bias, C = 0
  // (an overwritten dbias is still Σ dout), and odd's sizes with C = 8: with
  // GELU, cublaslt's DGELU epilogue (an overwritten dinp, C % 8 == 0; the
  // Overwrite tests take 0.75 s a binary so, 2.0 s with gpt2qkv's C = 96).
  static std::vector<Shape> overwrite_shapes() {
    std::vector<Shape> v;
    for (const Shape& s : shapes())
      if (s.name == "odd" || s.name == "mid" || s.name == "nobias" || s.name == "C0")
        v.push_back(s);
    v.push_back(shape({"C8", 3, 5, 8, 11}));
    return v;
  }
  // B = 0, T = 0, OC = 0: nothing to sum.
  static std::vector<Shape> empty_shapes() { return shapes_of(llmk_test::empty_shapes()); }
  // llm.c's dev/cuda/matmul_backward.cu: B = 8, T = 1024, C = 768, OC = 3072.
  static std::vector<Shape> large_shapes() { return {shape(llmk::reference::seed_shape())}; }
  // The naive kernels gather a strided column per output element: at the seed
  // shape they take 10 (OpenMP) to 20 (Serial) minutes on 2 cores, and their
  // loops are the same at every size.
  template <class Space>
  static std::string slow_reason(const std::string& impl, const Shape&) {
    if (is_host_space<Space> && impl == "naive")
      return "naive on a CPU takes 10-20 minutes at the seed shape (2 cores)";
    return "";
  }
  static Shape nan_shape() { return shape({"nan", 2, 9, 24, 40}); }
  // Every sum the implementations split or reduce, with remainders: M = 1041
  // rows, past a CPU's 1024-row chunk, in 9 GPU tiles of 128 (dinp) and 3 of
  // the host's 512-row dbias segments; dweight (OC = C = 67) one tile, whose
  // sums over M split-K splits. (B = 3, T = 347, C = 201, OC = 531 before:
  // naive, 0.3 s a call on 2 cores, took 7-12 s a test with the variants'
  // 20 calls.)
  static Shape determinism_shape() { return shape({"det", 3, 347, 67, 67}); }
  // Work for every kernel (several tiles, chunks and dbias segments); and
  // C = 0, where an implementation that needs no workspace for its products
  // still needs one for dbias (the shared column sums).
  static std::vector<Shape> workspace_shapes() {
    return {shape({"ws", 2, 129, 67, 261}), shape({"wsC0", 2, 129, 0, 261})};
  }
  // B = 2, T = 3 (M = 6), C = 4, OC = 5: every extent differs from the others,
  // so a message's numbers tell which extent it is about.
  static Shape bad_input_shape() { return shape({"bad", 2, 3, 4, 5}); }
  static Shape concurrency_shape(int i) {
    static const llmk::reference::Shape shapes[] = {
        {"c0", 2, 50, 40, 70}, {"c1", 3, 37, 65, 129}, {"c2", 1, 200, 33, 17}, {"c3", 2, 64, 96, 288}};
    return shape(shapes[i % 4]);
  }

  // --- arguments, in the order of the entry points --------------------------------

  enum Arg : std::size_t { dinp, dweight, dbias, dout, inp, weight, pre_gelu };

  // From spec.hpp: dout fixes B, T (M) and OC, weight C. Alignments
  // alternate, so that each GEMM meets both kinds among its operands.
  static std::vector<ArgSpec> args(const Shape& s, Precision p) {
    std::vector<ArgSpec> v = contract::spec_args<llmk::op::matmul_backward::Spec>(
        {{"B", s.B}, {"T", s.T}, {"C", s.C}, {"OC", s.OC}}, storage(p));
    v[dbias].present = s.bias;     // nullptr: no bias gradient
    v[pre_gelu].present = s.gelu;  // nullptr: no GELU
    for (const Arg a : {dinp, dbias, inp}) v[a].alignment = Alignment::Element;
    return v;
  }

  static std::vector<contract::Dim> dims(const Shape& s) {
    return {{"B", s.B}, {"T", s.T}, {"C", s.C}, {"OC", s.OC}};
  }

  static std::vector<contract::Overflow> overflows() {
    constexpr std::int64_t k20 = std::int64_t(1) << 20, k30 = std::int64_t(1) << 30,
                           k32 = std::int64_t(1) << 32, k40 = std::int64_t(1) << 40,
                           k61 = std::int64_t(1) << 61;
    return {
        {{k32, k32, 4, 5}, "M = B·T"},                               // 2⁶⁴ wraps int64 to 0
        {{k32 - 1, k32 + 1, 4, 5}, "M = B·T"},                       // 2⁶⁴ − 1 wraps to −1
        {{k20, k20, k30, 5}, "elements of inp and dinp, M·C"},       // 2⁷⁰
        {{k20, k20, 4, k30}, "elements of dout, M·OC"},              // 2⁷⁰
        {{0, 3, k40, k40}, "elements of weight and dweight, OC·C"},  // 2⁸⁰ (with M = 0)
        {{1, 1, k32, k32}, "elements of weight and dweight, OC·C"},  // 2⁶⁴: wraps to 0
        {{1, 1, k61, 1}, "M·C"},  // 2⁶¹ floats: fits int64, not a byte offset
        // No rows and C = 0, but a dbias of 2⁶¹ and 2⁶² elements: refused on
        // OC alone (every product above is 0 here). Found by these cases: OC
        // was once unchecked; 2⁶¹ ran on naive and tiled (team and
        // kokkoskernels refused it for their column limit), 2⁶² (2⁶⁴ bytes:
        // spans wrapped to 0) passed every check, and an overwritten dbias's
        // zero fill died in Kokkos (SIGFPE).
        {{0, 3, 0, k61}, "1·OC"},
        {{0, 3, 0, 2 * k61}, "1·OC"},
    };
  }

  // --- problems and the reference ---------------------------------------------------

  static Problem make(const Shape& s, std::uint32_t seed, Precision p) {
    return {s, p, llmk::reference::make_problem(s, seed, {p, s.gelu})};
  }

  template <class P>
  static auto& values(P& p, std::size_t arg) {
    switch (arg) {
      case dinp: return p.host.dinp;
      case dweight: return p.host.dweight;
      case dbias: return p.host.dbias;
      case dout: return p.host.dout;
      case inp: return p.host.inp;
      case weight: return p.host.weight;
      case pre_gelu: return p.host.pre_gelu;
    }
    throw std::out_of_range("matmul_backward has 7 arguments");
  }

  static std::vector<std::vector<double>> reference(const Problem& p,
                                                    const contract::Overwrites& o) {
    Gradients64 g = reference_backward(p.host, llmk::reference::Method::Auto, 0, {o[0], o[1], o[2]});
    return {std::move(g.dinp), std::move(g.dweight), std::move(g.dbias)};
  }

  // Each element's float32 error bound (the reference library's error model:
  // ops/matmul_backward/reference/compare.hpp), for the bf16 outputs' checks.
  static std::vector<std::vector<double>> float32_error_bounds(
      const Problem& p, const contract::Overwrites& o, const std::vector<std::vector<double>>& ref) {
    Gradients64 r;
    r.dinp = ref[0], r.dweight = ref[1], r.dbias = ref[2];
    Gradients64 b = llmk::reference::float32_error_bounds(p.host, r, {o[0], o[1], o[2]});
    return {std::move(b.dinp), std::move(b.dweight), std::move(b.dbias)};
  }

  static double tolerance(Precision p, std::size_t output) {
    return llmk::reference::tolerance(p, llmk::reference::Output(output));
  }

  // --- calls ------------------------------------------------------------------------

  static Options options(const std::string& impl, Precision p, const contract::Overwrites& o) {
    Options options;
    options.impl = impl;
    options.math = math(p);
    options.dinp_update = contract::update(o[0]);
    options.dweight_update = contract::update(o[1]);
    options.dbias_update = contract::update(o[2]);
    return options;
  }

  template <class Space>
  static std::size_t workspace_bytes(const Shape& s, const Options& options, Precision p) {
    return llmk::matmul_backward_workspace_bytes<Space>(s.M(), s.C, s.OC, s.bias, options,
                                                        config(p), s.gelu);
  }

  // Without pre_gelu (none given): the overload that has none.
  template <class Target, class Space>
  static void call(Target& target, const std::vector<llmk::TensorRef<Space>>& out,
                   const std::vector<llmk::ConstTensorRef<Space>>& in, const Options& options) {
    if (in[3].empty())
      llmk::matmul_backward(target, out[0], out[1], out[2], in[0], in[1], in[2], options);
    else
      llmk::matmul_backward(target, out[0], out[1], out[2], in[0], in[1], in[2], in[3], options);
  }

  // The same through raw pointers (an absent pre_gelu is nullptr).
  template <class Target>
  static void call_raw(Target& target, const std::vector<llmk::BufferRef>& out,
                       const std::vector<llmk::ConstBufferRef>& in,
                       const std::vector<std::int64_t>& dims, const Options& options) {
    if (in[3].data == nullptr)
      llmk::matmul_backward(target, out[0], out[1], out[2], in[0], in[1], in[2], dims[0], dims[1],
                            dims[2], dims[3], options);
    else
      llmk::matmul_backward(target, out[0], out[1], out[2], in[0], in[1], in[2], in[3], dims[0],
                            dims[1], dims[2], dims[3], options);
  }
};

}  // namespace llmk_test
