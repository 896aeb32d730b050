// The contract tests: what every llmk operation must pass, written once over an
// operation ADAPTER `Op` that describes the operation to them. An operation's
// test file defines its adapter and registers the tests for it:
//
//   llmk_test::contract::register_space_tests<MyOpContract, Space>();   // per-space binary
//   llmk_test::contract::register_bad_input_tests<MyOpContract, Host>(); // validation binary
//   llmk_test::contract::register_backend_tests<MyOpContract, Tested, Reference>(); // backends
//
// (tests/support/layernorm_backward_adapter.hpp is layernorm_backward's adapter;
// tests/README.md lists what each aspect checks.) Every test is named
// "<Op::name()>/<aspect>.<case>", e.g.
// "layernorm_backward/Accuracy.blocked_bf16_odd_rank3"; the CTest groups'
// filters (tests/CMakeLists.txt) select "*Large*", "*Concurrency*" and
// "*HugeRows*" from them.
//
// The adapter (a struct of static members):
//
//   using Shape;    Problem;  Options;   the operation's reference shape, host
//                                        problem (with members `shape` and
//                                        `precision`), and its options struct
//   static std::string name();           "layernorm_backward": test-name prefix
//   static std::vector<Precision> precisions();      its configurations (a math
//                                        mode, matmul's tf32, is one: float
//                                        arrays, TF32 products)
//   static bool everywhere(Precision);   whether every execution space must run
//                                        it (false for tf32: only where an
//                                        implementation has tensor cores)
//   static constexpr bool same_bits_on_host_spaces;   results depend on the sizes
//                                        alone, not on a host space's thread count
//   template <class Space> static ImplCatalog catalog();
//                                        its implementations on Space
//                                        (support/impl_params.hpp)
//   static std::vector<std::string> foreign_impls(); implementation names of
//                                        other operations that are not its own
//                                        (they must be refused as unknown)
//   variants (the forms a call takes beside its sizes: matmul's without and
//   with GELU's pre_gelu; every aspect runs every shape in each):
//     static std::vector<std::string> variants();  "" (the plain call) first,
//                        then names that become test-name suffixes ("gelu")
//     static Shape in_variant(Shape, const std::string& variant);
//                        the shape in that variant (the contract names it
//                        "<shape>_<variant>": variant_shapes below)
//   shapes (Shape::name is part of test names):
//     shapes()            every implementation × precision, against the reference
//     overwrite_shapes()  the Overwrite tests' (poisoned outputs)
//     empty_shapes()      zero-sized dimensions: valid no-ops that need no workspace
//     large_shapes()      real model sizes (label `large`)
//     workspace_shapes()  the Workspace tests' (one where each implementation
//                         needs some workspace)
//     nan_shape(), determinism_shape(), bad_input_shape()
//                         (bad_input_shape: small, every size distinct, so
//                         that a message's numbers tell the extents apart)
//     concurrency_shape(int i)  distinct problems for threads and streams
//   template <class Space> static std::string slow_reason(const std::string& impl,
//                        const Shape&);   why impl takes too long on Space at a
//                        large shape to run by default ("": it runs; else the
//                        test skips unless LLMK_TEST_SLOW=1)
//   static std::vector<ArgSpec> args(const Shape&, Precision);
//                        every array argument, in the order the entry points
//                        take them (outputs first, as in every llmk entry)
//   static std::vector<Dim> dims(const Shape&);   the raw-pointer entry's sizes
//   static std::vector<Overflow> overflows();     sizes whose products overflow
//   static Problem make(const Shape&, std::uint32_t seed, Precision);
//   static const std::vector<float>& values(const Problem&, std::size_t arg);
//   static std::vector<float>& values(Problem&, std::size_t arg);
//                        an argument's host values (initial ones for outputs)
//   static std::vector<std::vector<double>> reference(const Problem&, const Overwrites&);
//                        every output (in argument order) in float64
//   static double tolerance(Precision, std::size_t output);
//   static Options options(const std::string& impl, Precision, const Overwrites&);
//                        (the precision: for its math mode)
//   template <class Space> static std::size_t workspace_bytes(const Shape&,
//                        const Options&, Precision);
//   template <class Target, class Space> static void call(Target& ctx_or_exec,
//       const std::vector<llmk::TensorRef<Space>>& outputs,
//       const std::vector<llmk::ConstTensorRef<Space>>& inputs, const Options&);
//   template <class Target> static void call_raw(Target& ctx_or_exec,
//       const std::vector<llmk::BufferRef>& outputs,
//       const std::vector<llmk::ConstBufferRef>& inputs,
//       const std::vector<std::int64_t>& dims, const Options&);
//                        the view entry (rank 2 or 3: the views' ranks say) and
//                        the raw-pointer entry; Target is llmk::Context<Space>
//                        or const Space (the implicit context). An absent
//                        output comes as an empty view (a write through it
//                        hits a guard band), an absent input as no argument
//                        (a default TensorRef: the call without it), either
//                        as nullptr through raw pointers.
//
// An operation with int32 inputs (encoder_backward's tokens,
// classifier_backward's targets: ArgSpec::int32, valid values in [0,
// int_limit)) also has
//   static const std::vector<std::int32_t>& int_values(const Problem&, std::size_t arg);
//   static std::vector<std::int32_t>& int_values(Problem&, std::size_t arg);
//                        such an argument's values (values() has none for it)
// and its calls take them apart from the float ones, with the raw entry's
// sizes (the views' call may need a size that no view carries: the
// classifier's V):
//   template <class Target, class Space> static void call(Target&,
//       const std::vector<llmk::TensorRef<Space>>& outputs,
//       const std::vector<llmk::ConstTensorRef<Space>>& inputs,
//       const std::vector<IntArg>& ints, const std::vector<std::int64_t>& dims,
//       const Options&);
//   template <class Target> static void call_raw(Target&,
//       const std::vector<llmk::BufferRef>& outputs,
//       const std::vector<llmk::ConstBufferRef>& inputs,
//       const std::vector<const std::int32_t*>& ints,
//       const std::vector<std::int64_t>& dims, const Options&);
//                        (inputs: the float ones, ints: the int32 ones, each
//                        in argument order; the adapter makes the entry's own
//                        view of an IntArg: llmk::TokensView, a TargetsRef)
// The contract never poisons an int32 argument nor plants NaN in it; where
// it makes one up (another extent in the bad-input tests) its values are
// random in [0, int_limit).
//
// Optional members (found by the contract where the adapter has them):
//   static constexpr bool no_two_inputs_alike = true;
//                        no two inputs of one element type and size in any
//                        variant (the encoder's are float dout and int32
//                        tokens): BadInputs.SharedAndAdjacentMemoryAccepted
//                        then has no pair to share, and says so
//   static ::testing::AssertionResult matches(const Problem&, std::size_t output,
//       const std::vector<float>& out, const std::vector<double>& ref, double scale);
//                        output `output` of a result against ref (the float64
//                        reference, or another result: scale 2, the sum of two
//                        results' tolerances) the operation's own way, in place
//                        of matches_reference within Op::tolerance (the
//                        classifier's per-element tolerances and padded
//                        columns exactly +0; the encoder's untouched rows of
//                        dwte bitwise); bf16 outputs are then still held to
//                        one rounding where the implementation promises it
// and accuracy.hpp's nan_bound, device_problem.hpp's float32_error_bounds.
#pragma once

#include "support/guarded_array.hpp"
#include "support/impl_params.hpp"

#include <core/reference/precision.hpp>
#include <llmk/types.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace llmk_test::contract {

using llmk::reference::Precision;

// One array argument of an operation's entry points, for a shape and a precision.
struct ArgSpec {
  std::string name;  // as messages name it: "dinp", "mean"
  bool output = false;
  // An output that every call reads first (an optimizer's state): never
  // poisoned, no Update option (Overwrites leave it as it is).
  bool inout = false;
  std::vector<std::int64_t> rank2;  // extents through the rank-2 entry: (M, C), (C), (M)
  std::vector<std::int64_t> rank3;  // through the rank-3 entry: (B, T, C), (C), (B, T)
  llmk::DType dtype = llmk::DType::f32;  // in the precision
  // false: absent in this shape (no bias, no GELU): an output an empty view,
  // an input no argument, either nullptr through raw pointers
  bool present = true;
  bool optional = false;  // may be absent: its null pointer means "none", not an error
  // The argument whose extents fix the others' (matmul's and layernorm's
  // dout): extents that do not fit are reported on the others, so its own
  // bad-extents test gives it a wrong rank.
  bool leader = false;
  // Its last extent is a size of the call that the others' are checked
  // against (matmul's weight: C): another one is not refused on it, so it
  // gets no test of a wrong last extent.
  bool defines_last_extent = false;
  // Inputs that must share one element type (the first of a group is the one
  // the others are compared with): "inputs" (dout, inp, weight), ...
  std::string group;
  // Its role in the precision configurations (the entry's message lists the
  // call's types by role): "inputs", "dinp", "mean and rstd", ...
  std::string role;
  // Element type fixed in every configuration and in the raw-pointer entry
  // (layernorm's mean and rstd: const float*): no bf16 through raw pointers.
  bool float_only = false;
  Alignment alignment = Alignment::Allocation;
  // Its first extent is a size of the call (encoder's dwte: V, the
  // vocabulary): another one is not refused, so it gets no test of a wrong
  // first extent.
  bool defines_first_extent = false;
  // An output that may be written in place of this input (classifier's
  // dlogits over logits: the same array, same address and size, is the call
  // in place, not an overlap): the Aliasing tests give it only a partial overlap.
  std::string in_place_of;
  // An int32 input (tokens, targets) instead of float or bf16 (dtype unused):
  // its values are Op::int_values(), valid in [0, int_limit).
  bool int32 = false;
  std::int64_t int_limit = 0;

  std::int64_t elements() const {
    if (!present) return 0;
    std::int64_t n = 1;
    for (std::int64_t e : rank2) n *= e;
    return n;
  }
  std::size_t element_bytes() const { return int32 || dtype == llmk::DType::f32 ? 4 : 2; }
  std::size_t bytes() const { return std::size_t(elements()) * element_bytes(); }
  // Whether two arguments hold elements of one type (int32, or float or bf16 alike).
  bool same_type(const ArgSpec& o) const {
    return int32 == o.int32 && (int32 || dtype == o.dtype);
  }
  // Columns of a rank-2 output, for messages ((row, col) of the worst element).
  std::int64_t cols() const { return rank2.size() == 2 ? rank2[1] : 0; }
};

// An int32 argument as the view entry gets it (call_with makes it from the
// problem's array and the ArgSpec's extents; absent: null, no extents).
struct IntArg {
  const std::int32_t* data = nullptr;
  std::vector<std::int64_t> extents;
};

// Whether an operation has int32 arguments (its adapter int_values(), and
// the calls that take them).
template <class Op, class = void>
struct has_int_args : std::false_type {};
template <class Op>
struct has_int_args<Op, std::void_t<decltype(Op::int_values(
                            std::declval<const typename Op::Problem&>(), std::size_t(0)))>>
    : std::true_type {};

// Argument i's int32 values (an operation without int32 arguments has none).
template <class Op, class P>
std::conditional_t<std::is_const_v<P>, const std::vector<std::int32_t>&, std::vector<std::int32_t>&>
int_values_of(P& p, std::size_t i) {
  if constexpr (has_int_args<Op>::value) {
    return Op::int_values(p, i);
  } else {
    (void)p;
    throw std::logic_error(Op::name() + ": argument " + std::to_string(i) +
                           " is int32 but the adapter has no int_values()");
  }
}

// Random valid values of an int32 argument: uniform in [0, limit).
inline std::vector<std::int32_t> random_ints(std::int64_t n, std::int64_t limit,
                                             std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::int32_t> v(std::size_t(std::max<std::int64_t>(n, 0)));
  for (std::int32_t& x : v) x = limit > 0 ? std::int32_t(rng() % std::uint64_t(limit)) : 0;
  return v;
}

// A size of the raw-pointer entry: ("B", 2).
struct Dim {
  std::string name;
  std::int64_t value;
};

// Sizes of the raw-pointer entry whose products overflow, and the product the
// message must name ("M = B·T").
struct Overflow {
  std::vector<std::int64_t> dims;
  std::string product;
  // Non-empty: a bug of the library, reported, that this case shows; the
  // test is registered DISABLED_ (CTest lists it as not run) until it is fixed.
  std::string known_bug = {};
};

// Per output (in argument order): true = Update::overwrite, false = accumulate.
using Overwrites = std::vector<bool>;
// Every output's values after a call (bf16 widened to float), in argument order.
using Outputs = std::vector<std::vector<float>>;

inline std::vector<std::size_t> output_indices(const std::vector<ArgSpec>& specs) {
  std::vector<std::size_t> v;
  for (std::size_t i = 0; i < specs.size(); ++i)
    if (specs[i].output) v.push_back(i);
  return v;
}
inline std::vector<std::size_t> input_indices(const std::vector<ArgSpec>& specs) {
  std::vector<std::size_t> v;
  for (std::size_t i = 0; i < specs.size(); ++i)
    if (!specs[i].output) v.push_back(i);
  return v;
}

// The Update of an output that `overwrite`s, or accumulates (for the
// adapters' options()).
inline llmk::Update update(bool overwrite) {
  return overwrite ? llmk::Update::overwrite : llmk::Update::accumulate;
}

// Each output that has an Update option overwritten alone, then all of them
// (the others accumulate); an operation whose outputs are all inout has the
// one combination, none overwritten.
inline std::vector<Overwrites> overwrite_combinations(const std::vector<ArgSpec>& specs) {
  const std::vector<std::size_t> outs = output_indices(specs);
  std::vector<Overwrites> v;
  Overwrites all(outs.size(), false);
  for (std::size_t k = 0; k < outs.size(); ++k) {
    if (specs[outs[k]].inout) continue;
    Overwrites o(outs.size(), false);
    o[k] = all[k] = true;
    v.push_back(o);
  }
  v.push_back(all);
  return v;
}

// "overwrite dinp dbias", or "accumulate".
inline std::string describe_overwrites(const std::vector<ArgSpec>& specs, const Overwrites& o) {
  std::string s;
  const std::vector<std::size_t> outs = output_indices(specs);
  for (std::size_t k = 0; k < outs.size() && k < o.size(); ++k)
    if (o[k]) s += " " + specs[outs[k]].name;
  return s.empty() ? "accumulate" : "overwrite" + s;
}

// "(6, 4)", as llmk's messages write extents.
inline std::string extents_string(const std::vector<std::int64_t>& e) {
  std::ostringstream s;
  s << '(';
  for (std::size_t i = 0; i < e.size(); ++i) s << (i ? ", " : "") << e[i];
  s << ')';
  return s.str();
}

// Initial values an overwritten output must never let through: NaN, ±Inf,
// 1e30 in turn.
inline void poison(std::vector<float>& v) {
  const float values[] = {std::numeric_limits<float>::quiet_NaN(),
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(), 1e30f};
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = values[i % 4];
}

// The name of a shape in a variant: "odd", "odd_gelu".
inline std::string variant_name(const std::string& shape, const std::string& variant) {
  return variant.empty() ? shape : shape + "_" + variant;
}

// A shape in one of Op's variants, named "<shape>_<variant>" (in the plain
// one, "", it keeps its name).
template <class Op>
typename Op::Shape variant_shape(const typename Op::Shape& shape, const std::string& variant) {
  typename Op::Shape s = Op::in_variant(shape, variant);
  s.name = variant_name(shape.name, variant);
  return s;
}
// A shape in each of Op's variants.
template <class Op>
std::vector<typename Op::Shape> variant_shapes(const typename Op::Shape& shape) {
  std::vector<typename Op::Shape> v;
  for (const std::string& variant : Op::variants()) v.push_back(variant_shape<Op>(shape, variant));
  return v;
}
// Every shape of a list in each variant.
template <class Op>
std::vector<typename Op::Shape> variant_shapes(const std::vector<typename Op::Shape>& shapes) {
  std::vector<typename Op::Shape> v;
  for (const typename Op::Shape& shape : shapes)
    for (const typename Op::Shape& s : variant_shapes<Op>(shape)) v.push_back(s);
  return v;
}

}  // namespace llmk_test::contract
