// llmk::residual_forward described to the contract tests
// (tests/contract/operation.hpp lists what an adapter provides): the GELU
// backward's shapes (support/gelu_backward_adapter.hpp: elementwise over B×T×C), its
// arguments from its declaration, its float64 reference
// (ops/residual_forward/reference.hpp).
#pragma once

#include "contract/operation.hpp"
#include "contract/spec_adapter.hpp"
#include "support/foreign_impls.hpp"
#include "support/gelu_backward_adapter.hpp"

#include <llmk/residual_forward.hpp>
#include <ops/residual_forward/reference.hpp>
#include <ops/residual_forward/spec.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace llmk_test {

struct ResidualForwardContract : OperationAdapter<llmk::ResidualForward>,
    ShapesOf<GeluBackwardContract>,  // the GELU backward's shapes
    ElementwiseArgs<llmk::op::residual_forward::Spec> {
  using Shape = llmk::reference::gelu::Shape;
  using Problem = llmk::reference::residual_forward::HostProblem;
  using Options = llmk::ResidualForwardOptions;
  using Spec = llmk::op::residual_forward::Spec;

  static std::string name() { return "residual_forward"; }
  static constexpr bool same_bits_on_host_spaces = true;  // every element on its own
  static std::vector<Precision> precisions() { return {Precision::fp32, Precision::bf16}; }

  // (args, dims, overflows: ElementwiseArgs', through the rank-2 entry as (N, 1))

  // --- problems and the reference ---------------------------------------------------
  static Problem make(const Shape& s, std::uint32_t seed, Precision p) {
    return llmk::reference::residual_forward::make_problem(s, seed, p);
  }
  template <class P>
  static auto& values(P& p, std::size_t arg) {
    return arg == Spec::out ? p.out : arg == Spec::inp1 ? p.inp1 : p.inp2;
  }
  static std::vector<std::vector<double>> reference(const Problem& p,
                                                    const contract::Overwrites& o) {
    return {llmk::reference::residual_forward::reference_forward(p, o[0])};
  }
  static double tolerance(Precision p, std::size_t) {
    return llmk::reference::residual_forward::tolerance(p);
  }

  // --- calls (options: OperationAdapter's, out = or +=) ---------------------------------
  template <class Space>
  static std::size_t workspace_bytes(const Shape& s, const Options& options, Precision p) {
    return llmk::residual_forward_workspace_bytes<Space>(s.N(), options,
                                                         llmk::reference::precision_name(p));
  }
  template <class Target, class Space>
  static void call(Target& target, const std::vector<llmk::TensorRef<Space>>& out,
                   const std::vector<llmk::ConstTensorRef<Space>>& in, const Options& options) {
    llmk::residual_forward(target, out[0], in[0], in[1], options);
  }
  template <class Target>
  static void call_raw(Target& target, const std::vector<llmk::BufferRef>& out,
                       const std::vector<llmk::ConstBufferRef>& in,
                       const std::vector<std::int64_t>& dims, const Options& options) {
    llmk::residual_forward(target, out[0], in[0], in[1], dims[0], options);
  }
};

}  // namespace llmk_test
