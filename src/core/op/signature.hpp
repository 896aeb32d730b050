// An operation's arguments, declared once (its spec.hpp): from this list the
// shared entry (core/op/entry.hpp) checks a call's extents, storage, memory
// and element types and types its views, and the contract tests
// (tests/contract/spec_adapter.hpp) derive every argument they pass. Plain
// constexpr data, no Kokkos: the tests and llmk-perf include it as it is.
//
// An argument's extents are symbols separated by spaces, e.g. "rows C":
//   rows   the call's rows: M through a rank-2 call, B T through a rank-3 one
//          (the leader's rank decides which, and every argument follows it)
//   other  a size of the call: the first present argument that holds it binds
//          it (the leader first, then Spec::binding's order where the spec
//          has one, else the list's), the others must agree
//   3C     a multiple of a size: binds C = extent / 3 where the extent is a
//          multiple of 3, else leaves C to the next argument that holds it
//          (which then tells what this one should have been)
//   1      an extent of its own, a number (a reduction's one result: "1")
// e.g. layer norm: dout "rows C" (the leader), weight "C", mean "rows";
// attention: att "B NH T T" (the leader, without rows: its B and T make
// M = B·T), qkv "rows 3C", dout "rows C".
#pragma once

#include <array>
#include <cstddef>
#include <string_view>
#include <type_traits>

namespace llmk::core::op {

enum class Dir : unsigned char {
  in,     // read only
  out,    // written (its Update option says = or +=)
  inout,  // read, then written in place (an optimizer's parameters)
};

struct Arg {
  std::string_view name;     // as messages name it: "dinp"
  Dir dir = Dir::in;
  std::string_view role;     // its element type's role in the precision list
                             // ("inputs", "dinp"); "" for an int32 or float32 one
  std::string_view extents;  // symbols, see above
  bool optional = false;     // may be absent (an empty reference): no dbias
  bool int32 = false;        // token ids, targets: int32 in every precision
  bool float32 = false;      // float in every precision, outside the roles (losses)
  // An output that may be exactly this input (same address and extents): the
  // call in place, as llm.c's fused classifier writes dlogits over the logits
  // and its GELU backward dinp over dout. Any other overlap is refused.
  std::string_view in_place_of;

  constexpr bool output() const { return dir != Dir::in; }
  constexpr Arg maybe_absent() const {
    Arg a = *this;
    a.optional = true;
    return a;
  }
  constexpr Arg may_be(std::string_view input) const {
    Arg a = *this;
    a.in_place_of = input;
    return a;
  }
};

constexpr Arg in(std::string_view name, std::string_view role, std::string_view extents) {
  return {name, Dir::in, role, extents};
}
constexpr Arg out(std::string_view name, std::string_view role, std::string_view extents) {
  return {name, Dir::out, role, extents};
}
// Read, then written in place (an optimizer's parameters and moments): an
// output every call also reads, so no Update option and no overlap.
constexpr Arg inout(std::string_view name, std::string_view role, std::string_view extents) {
  return {name, Dir::inout, role, extents};
}
constexpr Arg float32_inout(std::string_view name, std::string_view extents) {
  return {name, Dir::inout, "", extents, false, false, true};
}
constexpr Arg int32_in(std::string_view name, std::string_view extents) {
  return {name, Dir::in, "", extents, false, true};
}
constexpr Arg float32_out(std::string_view name, std::string_view extents) {
  return {name, Dir::out, "", extents, false, false, true};
}
constexpr Arg float32_in(std::string_view name, std::string_view extents) {
  return {name, Dir::in, "", extents, false, false, true};
}

// The symbols of an extents string, in order ("rows C": "rows", "C").
template <class F>
constexpr void for_each_symbol(std::string_view extents, F&& f) {
  std::size_t i = 0;
  while (i < extents.size()) {
    while (i < extents.size() && extents[i] == ' ') ++i;
    std::size_t j = i;
    while (j < extents.size() && extents[j] != ' ') ++j;
    if (j > i) f(extents.substr(i, j - i));
    i = j;
  }
}

// A symbol's multiplier and the size it multiplies: "3C" is 3 × "C", "C" 1 × "C";
// a number alone, "1", multiplies no size (symbol empty: literal()).
struct Factor {
  int k = 1;
  std::string_view symbol;
  constexpr bool literal() const { return symbol.empty(); }
};
constexpr Factor factor_of(std::string_view symbol) {
  Factor f{0, symbol};
  std::size_t i = 0;
  for (; i < symbol.size() && symbol[i] >= '0' && symbol[i] <= '9'; ++i)
    f.k = 10 * f.k + (symbol[i] - '0');
  f.symbol = symbol.substr(i);
  if (i == 0) f.k = 1;
  return f;
}

constexpr bool has_rows(std::string_view extents) {
  bool rows = false;
  for_each_symbol(extents, [&](std::string_view s) { rows = rows || s == "rows"; });
  return rows;
}

// The index of the argument named `name` in a spec's list (a compile error
// where there is none, when used in a constant expression).
template <std::size_t N>
constexpr std::size_t arg_index(const std::array<Arg, N>& args, std::string_view name) {
  for (std::size_t i = 0; i < N; ++i)
    if (args[i].name == name) return i;
  throw "no argument of that name";
}

// The order in which a spec's arguments bind its sizes: Spec::binding where
// it declares one (attention: qkv's 3C before dout's C), else the leader,
// then the list's order.
template <class Spec, class = void>
struct has_binding : std::false_type {};
template <class Spec>
struct has_binding<Spec, std::void_t<decltype(Spec::binding)>> : std::true_type {};

template <class Spec>
constexpr std::array<std::size_t, Spec::args.size()> binding_order() {
  if constexpr (has_binding<Spec>::value) {
    static_assert(Spec::binding.size() == Spec::args.size() && Spec::binding[0] == Spec::leader,
                  "Spec::binding lists every argument once, the leader first");
    return Spec::binding;
  } else {
    std::array<std::size_t, Spec::args.size()> order{};
    std::size_t n = 0;
    order[n++] = Spec::leader;
    for (std::size_t i = 0; i < Spec::args.size(); ++i)
      if (i != Spec::leader) order[n++] = i;
    return order;
  }
}

}  // namespace llmk::core::op
