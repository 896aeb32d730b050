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
//          it (the leader first, then the list's order), the others must agree
// e.g. layer norm: dout "rows C" (the leader), weight "C", mean "rows".
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

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

}  // namespace llmk::core::op
