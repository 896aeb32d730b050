// What an adapter reports of its operation's implementations, from the
// operation's tag (llmk/operation.hpp's generic queries): the catalog on a
// space, and the names it must refuse as unknown (foreign_impls(): every
// other operation's that it does not share, each once; the operations from
// cmake/operations.cmake's list, so that a new one's names are tried on all
// the others).
#pragma once

#include "contract/operation.hpp"
#include "support/impl_params.hpp"

#include <core/reference/precision.hpp>

#include <operations.hpp>  // generated: AllOperations

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace llmk_test {

// The names of every operation's implementations (AllOperations) that `own`
// does not share, each once.
template <class Info, class... Tags>
std::vector<std::string> foreign_impls_among(const std::vector<Info>& own, std::tuple<Tags...>*) {
  return foreign_impl_names(as_impl_infos(own), {as_impl_infos(llmk::impls<Tags>())...});
}
template <class Info>
std::vector<std::string> foreign_impls_of(const std::vector<Info>& own) {
  return foreign_impls_among(own, static_cast<AllOperations*>(nullptr));
}

// Whether an operation's options have `out_update`.
template <class Options, class = void>
struct has_out_update : std::false_type {};
template <class Options>
struct has_out_update<Options, std::void_t<decltype(std::declval<Options&>().out_update)>>
    : std::true_type {};

// An adapter's base (tests/contract/operation.hpp lists what an adapter
// provides): catalog<Space>() and foreign_impls() of the operation `Tag`,
// how a test precision is passed to it (tf32: the fp32 configuration with
// Math::tf32), and the defaults an adapter may redeclare: every space runs
// every precision but tf32, and one form of call.
template <class Tag>
struct OperationAdapter {
  using Precision = llmk::reference::Precision;
  using ArgSpec = contract::ArgSpec;
  static Precision storage(Precision p) { return p == Precision::tf32 ? Precision::fp32 : p; }
  static const char* config(Precision p) { return llmk::reference::precision_name(storage(p)); }
  static llmk::Math math(Precision p) {
    return p == Precision::tf32 ? llmk::Math::tf32 : llmk::Math::fp32;
  }

  template <class Space>
  static ImplCatalog catalog() {
    return {as_impl_infos(llmk::impls<Tag>()),
            [](const std::string& impl) { return llmk::available<Tag, Space>(impl); },
            [](Precision p) { return llmk::auto_impl<Tag, Space>(config(p), math(p)); }};
  }
  static std::vector<std::string> foreign_impls() { return foreign_impls_of(llmk::impls<Tag>()); }

  static bool everywhere(Precision p) { return p != Precision::tf32; }
  static std::vector<std::string> variants() { return {""}; }
  // The options of a call: the implementation, and where the operation has
  // one output with an Update (a forward's out), that output overwritten or
  // accumulated. (The backward adapters, whose outputs are gradients with
  // updates of their own, declare theirs; the classifier's and AdamW's have
  // no Update.)
  static typename Tag::Options options(const std::string& impl, Precision,
                                       const contract::Overwrites& o) {
    typename Tag::Options options;
    options.impl = impl;
    if constexpr (has_out_update<typename Tag::Options>::value)
      options.out_update = contract::update(o[0]);
    return options;
  }
  template <class Shape>
  static Shape in_variant(const Shape& s, const std::string&) {
    return s;
  }
};

// The shapes of another operation's adapter, for one whose arguments have
// the same sizes (a forward and its backward): every shape list, the single
// shapes and slow_reason (none of the other's variants).
template <class Other>
struct ShapesOf {
  using Shape = typename Other::Shape;
  static std::vector<Shape> shapes() { return Other::shapes(); }
  static std::vector<Shape> overwrite_shapes() { return Other::overwrite_shapes(); }
  static std::vector<Shape> empty_shapes() { return Other::empty_shapes(); }
  static std::vector<Shape> large_shapes() { return Other::large_shapes(); }
  static std::vector<Shape> workspace_shapes() { return Other::workspace_shapes(); }
  static Shape nan_shape() { return Other::nan_shape(); }
  static Shape determinism_shape() { return Other::determinism_shape(); }
  static Shape bad_input_shape() { return Other::bad_input_shape(); }
  static Shape concurrency_shape(int i) { return Other::concurrency_shape(i); }
  template <class Space>
  static std::string slow_reason(const std::string& impl, const Shape& s) {
    return Other::template slow_reason<Space>(impl, s);
  }
};

}  // namespace llmk_test
