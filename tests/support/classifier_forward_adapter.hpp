// llmk::classifier_forward described to the contract tests
// (tests/contract/operation.hpp lists what an adapter provides): the
// classifier backward's shapes, sizes and overflows (its adapter's), its
// arguments from its declaration (losses, logits, targets: int32, valid in
// [0, V)), the losses of the classifier's float64 reference with its
// per-element tolerance. losses is always written (no Update): the reference
// ignores the contract's Overwrites.
#pragma once

#include "support/classifier_backward_adapter.hpp"

#include <llmk/classifier_forward.hpp>
#include <ops/classifier_forward/spec.hpp>

namespace llmk_test {

struct ClassifierForwardContract : OperationAdapter<llmk::ClassifierForward> {
  using Base = ClassifierBackwardContract;  // shapes, sizes, targets' views
  using Shape = Base::Shape;
  struct Problem {
    Shape shape;
    Precision precision = Precision::fp32;
    llmk::reference::classifier::HostProblem host;
    std::vector<float> losses;
  };
  using Options = llmk::ClassifierForwardOptions;
  using Spec = llmk::op::classifier_forward::Spec;

  static std::string name() { return "classifier_forward"; }
  static constexpr bool same_bits_on_host_spaces = true;  // a row a function on hosts
  static constexpr bool no_two_inputs_alike = true;       // float logits, int32 targets
  static std::vector<Precision> precisions() { return {Precision::fp32, Precision::bf16}; }

  static std::vector<Shape> shapes() { return Base::shapes(); }
  static std::vector<Shape> overwrite_shapes() { return Base::shapes(); }
  static std::vector<Shape> empty_shapes() { return Base::empty_shapes(); }
  static std::vector<Shape> large_shapes() { return Base::large_shapes(); }
  template <class Space>
  static std::string slow_reason(const std::string&, const Shape&) {
    return "";
  }
  static Shape nan_shape() { return Base::nan_shape(); }
  static Shape determinism_shape() { return Base::determinism_shape(); }
  static std::vector<Shape> workspace_shapes() { return Base::workspace_shapes(); }
  static Shape bad_input_shape() { return Base::bad_input_shape(); }
  static Shape concurrency_shape(int i) { return Base::concurrency_shape(i); }

  // --- arguments: losses, logits, targets ------------------------------------------
  static std::vector<ArgSpec> args(const Shape& s, Precision p) {
    std::vector<ArgSpec> v = contract::spec_args<Spec>({{"B", s.B}, {"T", s.T}, {"Vp", s.Vp}}, p);
    // 16-byte rows at two shapes: the fused kernel's vector path.
    v[Spec::logits].alignment =
        s.name == "gpt2pad" || s.name == "long" ? Alignment::Allocation : Alignment::Element;
    v[Spec::targets].int_limit = s.V;
    v[Spec::targets].alignment = Alignment::Element;
    return v;
  }
  static std::vector<contract::Dim> dims(const Shape& s) { return Base::dims(s); }
  static std::vector<contract::Overflow> overflows() { return Base::overflows(); }

  // --- problems and the reference ---------------------------------------------------
  static Problem make(const Shape& s, std::uint32_t seed, Precision p) {
    Problem q{s, p, llmk::reference::classifier::make_problem(s, seed, p), {}};
    q.losses.resize(std::size_t(s.M()));
    llmk::reference::fill_random(q.losses, seed + 6);
    return q;
  }
  template <class P>
  static auto& values(P& p, std::size_t arg) {
    if (arg == Spec::losses) return p.losses;
    if (arg == Spec::logits) return p.host.logits;
    throw std::out_of_range("classifier_forward's float arguments are losses and logits");
  }
  template <class P>
  static auto& int_values(P& p, std::size_t arg) {
    if (arg != Spec::targets) throw std::out_of_range("classifier_forward's int32 argument is targets");
    return p.host.targets;
  }
  static std::vector<std::vector<double>> reference(const Problem& p, const contract::Overwrites&) {
    return {llmk::reference::classifier::reference_backward(p.host).losses};
  }
  // Element by element within the reference library's losses tolerance.
  static ::testing::AssertionResult matches(const Problem& p, std::size_t,
                                            const std::vector<float>& out,
                                            const std::vector<double>& ref, double scale) {
    namespace cl = llmk::reference::classifier;
    const cl::Tolerance t = cl::losses_tolerance(p.precision);
    const std::string e = cl::compare("losses", out, ref, 1, {t.rel * scale, t.abs * scale});
    return e.empty() ? ::testing::AssertionSuccess() : ::testing::AssertionFailure() << e;
  }

  // --- calls (options: OperationAdapter's, the implementation) ----------------------
  template <class Space>
  static std::size_t workspace_bytes(const Shape& s, const Options& options, Precision p) {
    return llmk::classifier_forward_workspace_bytes<Space>(s.M(), s.V, s.Vp, options,
                                                           llmk::reference::precision_name(p));
  }
  template <class Target, class Space>
  static void call(Target& target, const std::vector<llmk::TensorRef<Space>>& out,
                   const std::vector<llmk::ConstTensorRef<Space>>& in,
                   const std::vector<contract::IntArg>& ints,
                   const std::vector<std::int64_t>& dims, const Options& options) {
    llmk::classifier_forward(target, out[0], in[0], Base::targets_view<Space>(ints[0]), dims[2],
                             options);
  }
  template <class Target>
  static void call_raw(Target& target, const std::vector<llmk::BufferRef>& out,
                       const std::vector<llmk::ConstBufferRef>& in,
                       const std::vector<const std::int32_t*>& ints,
                       const std::vector<std::int64_t>& dims, const Options& options) {
    llmk::classifier_forward(target, static_cast<float*>(out[0].data), in[0], ints[0], dims[0],
                             dims[1], dims[2], dims[3], options);
  }
};

}  // namespace llmk_test
