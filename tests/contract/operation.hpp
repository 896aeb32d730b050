// The contract tests: what every llmk operation must pass, written once over an
// operation ADAPTER `Op` that describes the operation to them. An operation's
// test file defines its adapter and registers the tests for it:
//
//   llmk_test::contract::register_space_tests<MyOpContract, Space>();   // per-space binary
//   llmk_test::contract::register_bad_input_tests<MyOpContract, Host>(); // validation binary
//   llmk_test::contract::register_backend_tests<MyOpContract, Tested, Reference>(); // backends
//
// (tests/support/layernorm_adapter.hpp is layernorm_backward's adapter;
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
#pragma once

#include "support/guarded_array.hpp"
#include "support/impl_params.hpp"

#include <core/reference/precision.hpp>
#include <llmk/types.hpp>

#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace llmk_test::contract {

using llmk::reference::Precision;

// One array argument of an operation's entry points, for a shape and a precision.
struct ArgSpec {
  std::string name;  // as messages name it: "dinp", "mean"
  bool output = false;
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

  std::int64_t elements() const {
    if (!present) return 0;
    std::int64_t n = 1;
    for (std::int64_t e : rank2) n *= e;
    return n;
  }
  std::size_t bytes() const {
    return std::size_t(elements()) * (dtype == llmk::DType::f32 ? 4 : 2);
  }
  // Columns of a rank-2 output, for messages ((row, col) of the worst element).
  std::int64_t cols() const { return rank2.size() == 2 ? rank2[1] : 0; }
};

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

// Each output overwritten alone, then all of them (the others accumulate).
inline std::vector<Overwrites> overwrite_combinations(std::size_t outputs) {
  std::vector<Overwrites> v;
  for (std::size_t k = 0; k < outputs; ++k) {
    Overwrites o(outputs, false);
    o[k] = true;
    v.push_back(o);
  }
  v.push_back(Overwrites(outputs, true));
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
