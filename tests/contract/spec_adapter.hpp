// An operation's arguments as the contract tests pass them, derived from its
// declaration (src/ops/<op>/spec.hpp, core/op/signature.hpp) rather than
// written again in its adapter: names, directions, extents through the
// rank-2 and rank-3 entries, element types in a precision, roles and the
// groups that share a type, the leader, optional and int32 arguments, the
// input an output may replace, and which argument's extent binds a size of
// the call. What the declaration does not say (where a shape leaves an
// argument out, alignments, the valid range of an int32 input) the adapter
// sets on the result.
#pragma once

#include "contract/operation.hpp"

#include <core/op/arguments.hpp>
#include <core/reference/precision.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace llmk_test::contract {

using llmk::core::op::SymbolSizes;  // core/op/arguments.hpp, as llmk-perf's

namespace detail {

// Whether argument `i`'s `symbol` ("C", "3C") is bound by another argument:
// one before it in the entry's binding order (core/op/signature.hpp's
// binding_order: "rows" binds B, T and M), or, for a multiple, one after it
// (a wrong extent, no multiple, leaves the size to that one).
template <class Spec>
bool bound_elsewhere(std::size_t i, std::string_view symbol) {
  using llmk::core::op::factor_of;
  const auto f = factor_of(symbol);
  if (f.literal()) return true;  // a number: no size of the call
  const auto holds = [&](std::size_t j) {
    bool h = false;
    llmk::core::op::for_each_symbol(Spec::args[j].extents, [&](std::string_view s) {
      h = h || factor_of(s).symbol == f.symbol ||
          (s == "rows" && (f.symbol == "B" || f.symbol == "T"));
    });
    return h;
  };
  if (i == Spec::leader) return false;
  bool before = true, bound = false;
  for (const std::size_t j : llmk::core::op::binding_order<Spec>()) {
    if (j == i) {
      before = false;
    } else if ((before || f.k > 1) && (j == Spec::leader || !Spec::args[j].optional)) {
      bound = bound || holds(j);
    }
  }
  return bound;
}

}  // namespace detail

template <class Spec>
std::vector<ArgSpec> spec_args(const SymbolSizes& sizes, Precision precision) {
  using llmk::core::op::Arg;
  const std::string_view pname = llmk::reference::precision_name(precision);
  std::vector<ArgSpec> v;
  for (std::size_t i = 0; i < Spec::args.size(); ++i) {
    const Arg& a = Spec::args[i];
    ArgSpec s;
    s.name = a.name;
    s.output = a.output();
    s.inout = a.dir == llmk::core::op::Dir::inout;
    s.rank2 = llmk::core::op::extents_of(a.extents, sizes, false);
    s.rank3 = llmk::core::op::extents_of(a.extents, sizes, true);
    s.optional = a.optional;
    s.leader = i == Spec::leader;
    s.in_place_of = a.in_place_of;
    s.int32 = a.int32;
    if (a.float32) {
      s.float_only = true;
    } else if (!a.int32) {
      std::tie(s.dtype, s.float_only) =
          llmk::core::op::role_dtype(typename Spec::Precisions{}, pname, a.role);
      s.role = a.role;
    }
    // Inputs of a role they share with another input must be of one type.
    for (std::size_t j = 0; j < Spec::args.size(); ++j)
      if (j != i && !a.output() && !Spec::args[j].output() && !a.role.empty() &&
          Spec::args[j].role == a.role)
        s.group = a.role;
    // Its first or last extent binds a size of the call: a wrong one is not
    // refused on it, it makes the others wrong.
    std::vector<std::string_view> symbols;
    llmk::core::op::for_each_symbol(a.extents, [&](std::string_view x) { symbols.push_back(x); });
    if (!s.leader && !symbols.empty()) {
      s.defines_first_extent =
          symbols.front() != "rows" && !detail::bound_elsewhere<Spec>(i, symbols.front());
      s.defines_last_extent =
          symbols.back() != "rows" && !detail::bound_elsewhere<Spec>(i, symbols.back());
    }
    v.push_back(std::move(s));
  }
  return v;
}

}  // namespace llmk_test::contract
