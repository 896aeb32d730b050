// llmk::classifier_backward described to the contract tests
// (tests/contract/operation.hpp lists what an adapter provides): its
// implementations, precisions and shapes, its variants (a per-position dloss;
// no losses), its arguments in the order of its entry points (targets an
// int32 input, valid in [0, V)), its reference library
// (llmk_classifier_backward_reference) with its per-element tolerances, and
// its calls.
//
// dlogits is always a separate array here: in place (dlogits the logits' own
// array) is test_classifier_backward.cpp's, and the contract's Aliasing test
// of dlogits over logits only overlaps them partly. Both outputs are always
// written (the operation has no Update): the reference ignores the
// contract's Overwrites, and the outputs' initial values, random or poisoned,
// must never come through.
#pragma once

#include "contract/operation.hpp"
#include "contract/spec_adapter.hpp"
#include "support/classifier_device.hpp"
#include "support/foreign_impls.hpp"
#include "support/impl_params.hpp"

#include <llmk/classifier_backward.hpp>
#include <core/reference/random.hpp>
#include <ops/classifier_backward/reference/reference.hpp>
#include <ops/classifier_backward/spec.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace llmk_test {

struct ClassifierBackwardContract : OperationAdapter<llmk::ClassifierBackward> {
  // The reference library's shape, and the variant: losses computed or not,
  // dloss per position or one value.
  struct Shape : llmk::reference::classifier::Shape {
    bool losses = true;
    bool dloss_per_position = false;
  };
  // The reference library's problem, and the outputs' initial values.
  struct Problem {
    Shape shape;
    Precision precision = Precision::fp32;
    llmk::reference::classifier::HostProblem host;
    std::vector<float> dlogits, losses;
  };
  using Options = llmk::ClassifierBackwardOptions;

  // The scalar dloss of every call without a per-position one (not 1: a
  // missing factor shows; a power of two: exact in every precision).
  static constexpr float kDloss = 0.375f;

  static std::string name() { return "classifier_backward"; }
  // Each row's sums in an order fixed by Vp (and on a GPU the tuning): host
  // spaces run one function a row (ops/classifier_backward/kernels.hpp's
  // classifier_row_host), the same bits on Serial and OpenMP.
  static constexpr bool same_bits_on_host_spaces = true;
  // float logits (M, Vp), float dloss (M), int32 targets: no two inputs to
  // share memory.
  static constexpr bool no_two_inputs_alike = true;

  static std::vector<Precision> precisions() { return {Precision::fp32, Precision::bf16}; }

  // --- variants and shapes -------------------------------------------------------

  // "": llm.c's call (losses, one dloss for all positions); "dloss": a float
  // dloss per position; "nolosses": dlogits alone.
  static std::vector<std::string> variants() { return {"", "dloss", "nolosses"}; }
  static Shape in_variant(Shape s, const std::string& variant) {
    s.losses = variant != "nolosses";
    s.dloss_per_position = variant == "dloss";
    return s;
  }

  static Shape shape(const llmk::reference::classifier::Shape& s) {
    Shape v;
    static_cast<llmk::reference::classifier::Shape&>(v) = s;
    return v;
  }

  // The reference library's (one row with V = 1; V = Vp; Vp of no pack; V a
  // pack boundary less one; GPT-2's padding at V = 257; a row of 20000),
  // every one of them Overwrite's too (the outputs are always overwritten:
  // there, from poison).
  static std::vector<Shape> shapes() {
    std::vector<Shape> v;
    for (const auto& s : llmk::reference::classifier::test_shapes()) v.push_back(shape(s));
    return v;
  }
  static std::vector<Shape> overwrite_shapes() { return shapes(); }
  // No rows: B = 0 (V = 10, Vp = 16), T = 0 (V = Vp = 0).
  static std::vector<Shape> empty_shapes() {
    return {shape({"B0", 0, 4, 10, 16}), shape({"T0", 3, 0, 0, 0})};
  }
  // GPT-2's classifier rows (V 50257, Vp 50304) at T = 1024, one sequence
  // (llm.c's B = 8 is the same rows eight times: 0.4·10⁹ logits, ~10 GB of
  // host memory for the problem, the reference and the results; the B = 8
  // size past 2³¹ elements is HugeRows').
  static std::vector<Shape> large_shapes() {
    llmk::reference::classifier::Shape s = llmk::reference::classifier::gpt2_shape();
    s.name = "gpt2_124M_B1";
    s.B = 1;
    return {shape(s)};
  }
  template <class Space>
  static std::string slow_reason(const std::string&, const Shape&) {
    return "";
  }
  // The NaN lands in logits' row 3, column 1 (a real one, V = 13), and in
  // the per-position dloss's position 4.
  static Shape nan_shape() { return shape({"nan", 2, 3, 13, 16}); }
  static Shape determinism_shape() { return shape({"det", 3, 11, 1000, 1008}); }
  // No implementation needs workspace (OneByteLess and Misaligned skip).
  static std::vector<Shape> workspace_shapes() { return {shape({"ws", 2, 5, 100, 104})}; }
  // B = 2, T = 3, V = 5, Vp = 8: extents in messages tell which size they are.
  static Shape bad_input_shape() { return shape({"bad", 2, 3, 5, 8}); }
  static Shape concurrency_shape(int i) {
    static const llmk::reference::classifier::Shape shapes[] = {
        {"c0", 2, 5, 61, 64}, {"c1", 3, 4, 127, 136}, {"c2", 1, 9, 300, 304}, {"c3", 2, 2, 1000, 1008}};
    return shape(shapes[i % 4]);
  }

  // --- arguments, in the order of the entry points --------------------------------

  enum Arg : std::size_t { dlogits, losses, logits, targets, dloss };

  static std::vector<ArgSpec> args(const Shape& s, Precision p) {
    std::vector<ArgSpec> v = contract::spec_args<llmk::op::classifier_backward::Spec>(
        {{"B", s.B}, {"T", s.T}, {"Vp", s.Vp}}, p);
    // 16-byte rows at two shapes: row_in_shared's and fused's vector paths
    // (element aligned, both take their element-by-element fallback).
    v[dlogits].alignment =
        s.name == "gpt2pad" || s.name == "long" ? Alignment::Allocation : Alignment::Element;
    v[losses].present = s.losses;
    v[targets].int_limit = s.V;
    v[targets].alignment = Alignment::Element;
    v[dloss].present = s.dloss_per_position;  // absent: the one value kDloss
    return v;
  }

  static std::vector<contract::Dim> dims(const Shape& s) {
    return {{"B", s.B}, {"T", s.T}, {"V", s.V}, {"Vp", s.Vp}};
  }

  static std::vector<contract::Overflow> overflows() {
    constexpr std::int64_t k20 = std::int64_t(1) << 20, k30 = std::int64_t(1) << 30,
                           k32 = std::int64_t(1) << 32, k61 = std::int64_t(1) << 61;
    return {
        {{k32, k32, 5, 8}, "M = B·T"},          // 2⁶⁴ wraps int64 to 0
        {{k32 - 1, k32 + 1, 5, 8}, "M = B·T"},  // 2⁶⁴ − 1 wraps to −1
        {{k20, k20, 5, k30}, "M·Vp"},           // 2⁷⁰ logits
        {{1, 1, 5, k61}, "M·Vp"},               // 2⁶¹ floats: fits int64, not a byte offset
    };
  }

  // --- problems and the reference ---------------------------------------------------

  static Problem make(const Shape& s, std::uint32_t seed, Precision p) {
    Problem q{s, p, llmk::reference::classifier::make_problem(s, seed, p, s.dloss_per_position), {},
              {}};
    q.host.dloss_value = kDloss;
    q.dlogits.resize(std::size_t(s.M() * s.Vp));
    llmk::reference::fill_random(q.dlogits, seed + 5);
    if (s.losses) {
      q.losses.resize(std::size_t(s.M()));
      llmk::reference::fill_random(q.losses, seed + 6);
    }
    return q;
  }

  template <class P>
  static auto& values(P& p, std::size_t arg) {
    switch (arg) {
      case dlogits: return p.dlogits;
      case losses: return p.losses;
      case logits: return p.host.logits;
      case dloss: return p.host.dloss;
    }
    throw std::out_of_range("classifier_backward's float arguments are dlogits, losses, logits, dloss");
  }
  template <class P>
  static auto& int_values(P& p, std::size_t arg) {
    if (arg != targets) throw std::out_of_range("classifier_backward's int32 argument is targets");
    return p.host.targets;
  }

  // (Always overwritten: the Overwrites do not matter.)
  static std::vector<std::vector<double>> reference(const Problem& p, const contract::Overwrites&) {
    llmk::reference::classifier::Result64 r = llmk::reference::classifier::reference_backward(p.host);
    if (!p.shape.losses) r.losses.clear();
    return {std::move(r.dlogits), std::move(r.losses)};
  }

  // Element by element within the reference library's tolerances (dlogits:
  // rel·|ref| + abs·|the row's dloss|), scale times them; dlogits' padded
  // columns [V, Vp) exactly +0, whatever logits and dlogits held there.
  static ::testing::AssertionResult matches(const Problem& p, std::size_t output,
                                            const std::vector<float>& out,
                                            const std::vector<double>& ref, double scale) {
    namespace cl = llmk::reference::classifier;
    const auto scaled = [scale](cl::Tolerance t) { return cl::Tolerance{t.rel * scale, t.abs * scale}; };
    if (output == losses) {
      const std::string e =
          cl::compare("losses", out, ref, 1, scaled(cl::losses_tolerance(p.precision)));
      return e.empty() ? ::testing::AssertionSuccess() : ::testing::AssertionFailure() << e;
    }
    const std::int64_t V = p.shape.V, Vp = p.shape.Vp;
    const std::string e =
        cl::compare("dlogits", out, ref, Vp, scaled(cl::dlogits_tolerance(p.precision)),
                    classifier::row_scales(p.host));
    if (!e.empty()) return ::testing::AssertionFailure() << e;
    for (std::int64_t m = 0; m < p.shape.M(); ++m)
      for (std::int64_t c = V; c < Vp; ++c) {
        const float x = out[std::size_t(m * Vp + c)];
        if (!(x == 0.0f && !std::signbit(x)))
          return ::testing::AssertionFailure()
                 << "dlogits (" << m << ", " << c << ") is " << x
                 << ": a padded column (V = " << V << ") must be +0";
      }
    return ::testing::AssertionSuccess();
  }

  // --- calls (options: OperationAdapter's, the implementation) ----------------------

  template <class Space>
  static std::size_t workspace_bytes(const Shape& s, const Options& options, Precision p) {
    return llmk::classifier_backward_workspace_bytes<Space>(s.M(), s.V, s.Vp, options,
                                                            llmk::reference::precision_name(p));
  }

  // The targets as a user's view of std::int32_t, (M) or (B, T).
  template <class Space>
  static llmk::TargetsRef<Space> targets_view(const contract::IntArg& a) {
    using Memory = typename Space::memory_space;
    using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
    if (a.extents.size() == 1)
      return Kokkos::View<const std::int32_t*, Kokkos::LayoutRight, Memory, Unmanaged>(
          a.data, std::size_t(a.extents[0]));
    if (a.extents.size() == 2)
      return Kokkos::View<const std::int32_t**, Kokkos::LayoutRight, Memory, Unmanaged>(
          a.data, std::size_t(a.extents[0]), std::size_t(a.extents[1]));
    throw std::logic_error("classifier_backward's targets are (M) or (B, T)");
  }

  // in: logits, then dloss (none: the one value); V from the sizes (no view has it).
  template <class Target, class Space>
  static void call(Target& target, const std::vector<llmk::TensorRef<Space>>& out,
                   const std::vector<llmk::ConstTensorRef<Space>>& in,
                   const std::vector<contract::IntArg>& ints,
                   const std::vector<std::int64_t>& dims, const Options& options) {
    const llmk::DlossRef<Space> d =
        in[1].empty() ? llmk::DlossRef<Space>(kDloss) : llmk::DlossRef<Space>(in[1]);
    llmk::classifier_backward(target, out[0], out[1], in[0], targets_view<Space>(ints[0]), d,
                              dims[2], options);
  }

  template <class Target>
  static void call_raw(Target& target, const std::vector<llmk::BufferRef>& out,
                       const std::vector<llmk::ConstBufferRef>& in,
                       const std::vector<const std::int32_t*>& ints,
                       const std::vector<std::int64_t>& dims, const Options& options) {
    using Space = typename SpaceOf<Target>::type;
    const auto* per_position = static_cast<const float*>(in[1].data);
    const llmk::DlossRef<Space> d =
        per_position ? llmk::DlossRef<Space>(per_position) : llmk::DlossRef<Space>(kDloss);
    llmk::classifier_backward(target, out[0], static_cast<float*>(out[1].data), in[0], ints[0], d,
                              dims[0], dims[1], dims[2], dims[3], options);
  }

 private:
  // The execution space of a call's target: a context's, or the instance's type.
  template <class Target>
  struct SpaceOf {
    using type = std::remove_const_t<Target>;
  };
  template <class Space>
  struct SpaceOf<llmk::Context<Space>> {
    using type = Space;
  };
};

}  // namespace llmk_test
