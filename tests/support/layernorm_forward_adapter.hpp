// llmk::layernorm_forward described to the contract tests
// (tests/contract/operation.hpp lists what an adapter provides): the layer
// norm backward's shapes (support/layernorm_backward_adapter.hpp), its arguments from
// its declaration, its float64 reference (ops/layernorm_forward/reference.hpp).
#pragma once

#include "contract/operation.hpp"
#include "contract/spec_adapter.hpp"
#include "support/foreign_impls.hpp"
#include "support/layernorm_backward_adapter.hpp"

#include <llmk/layernorm_forward.hpp>
#include <ops/layernorm_forward/reference.hpp>
#include <ops/layernorm_forward/spec.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace llmk_test {

struct LayernormForwardContract : OperationAdapter<llmk::LayernormForward>,
                                  ShapesOf<LayernormBackwardContract> {
  using Shape = llmk::reference::layernorm::Shape;
  using Problem = llmk::reference::layernorm_forward::HostProblem;
  using Options = llmk::LayernormForwardOptions;
  using Spec = llmk::op::layernorm_forward::Spec;
  using Shapes = LayernormBackwardContract;  // its shapes (ShapesOf) and overflows serve both

  static std::string name() { return "layernorm_forward"; }
  // Each row's sums in an order fixed by C: the same bits on every host space.
  static constexpr bool same_bits_on_host_spaces = true;
  static std::vector<Precision> precisions() { return {Precision::fp32, Precision::bf16}; }

  // --- arguments: out, mean, rstd, inp, weight, bias -----------------------------------
  static std::vector<ArgSpec> args(const Shape& s, Precision p) {
    std::vector<ArgSpec> v = contract::spec_args<Spec>({{"B", s.B}, {"T", s.T}, {"C", s.C}}, p);
    v[Spec::bias].present = s.bias;
    return v;
  }
  static std::vector<contract::Dim> dims(const Shape& s) {
    return {{"B", s.B}, {"T", s.T}, {"C", s.C}};
  }
  static std::vector<contract::Overflow> overflows() { return Shapes::overflows(); }

  // --- problems and the reference ---------------------------------------------------
  static Problem make(const Shape& s, std::uint32_t seed, Precision p) {
    return llmk::reference::layernorm_forward::make_problem(s, seed, p);
  }
  template <class P>
  static auto& values(P& p, std::size_t arg) {
    switch (arg) {
      case Spec::out:
        return p.out;
      case Spec::mean:
        return p.mean;
      case Spec::rstd:
        return p.rstd;
      case Spec::inp:
        return p.inp;
      case Spec::weight:
        return p.weight;
      case Spec::bias:
        return p.bias;
    }
    throw std::out_of_range("layernorm_forward has 6 arguments");
  }
  // (mean and rstd are written whatever the update: only out's matters.)
  static std::vector<std::vector<double>> reference(const Problem& p,
                                                    const contract::Overwrites& o) {
    return llmk::reference::layernorm_forward::reference_forward(p, o[0]);
  }
  static double tolerance(Precision p, std::size_t k) {
    return llmk::reference::layernorm_forward::tolerance(p, k);
  }

  // --- calls (options: OperationAdapter's, out = or +=) ---------------------------------
  template <class Space>
  static std::size_t workspace_bytes(const Shape& s, const Options& options, Precision p) {
    return llmk::layernorm_forward_workspace_bytes<Space>(s.M(), s.C, options,
                                                          llmk::reference::precision_name(p));
  }
  template <class Target, class Space>
  static void call(Target& target, const std::vector<llmk::TensorRef<Space>>& out,
                   const std::vector<llmk::ConstTensorRef<Space>>& in, const Options& options) {
    llmk::layernorm_forward(target, out[0], out[1], out[2], in[0], in[1], in[2], options);
  }
  template <class Target>
  static void call_raw(Target& target, const std::vector<llmk::BufferRef>& out,
                       const std::vector<llmk::ConstBufferRef>& in,
                       const std::vector<std::int64_t>& dims, const Options& options) {
    llmk::layernorm_forward(target, out[0], static_cast<float*>(out[1].data),
                            static_cast<float*>(out[2].data), in[0], in[1], in[2], dims[0], dims[1],
                            dims[2], options);
  }
};

}  // namespace llmk_test
