// An operation's entry point, written once for every operation from its
// declaration `Op` (its op.hpp, on its spec.hpp):
//   Op::name, Op::args        its name in messages and its arguments
//                             (core/op/signature.hpp), Op::leader the index
//                             of the argument whose extents fix the others'
//   Op::Precisions, Op::Implementations, Op::Sizes ...  as core/op/select.hpp
//                             and call.hpp describe them
//   Op::problem<S, P>(bound, options, scalars...)  the typed problem of a
//                             bound call
//   Op::math(options)         the math mode a call asks for (optional:
//                             Math::fp32 without it)
//   Op::check(bound, scalars...)  what the declaration cannot say (optional:
//                             the classifier's V against Vp)
// call<Op>(ctx, options, {args...}, scalars...) binds the arguments' extents to
// the declared symbols, checks storage, memory and element types (each failure
// an std::invalid_argument naming the argument and what was expected, before
// anything is written), matches the precision, picks the implementation and
// runs it with the context (core/op/call.hpp).
#pragma once

#include <array>
#include <core/checked.hpp>
#include <core/op/call.hpp>
#include <core/op/precision.hpp>
#include <core/op/select.hpp>
#include <core/op/signature.hpp>
#include <core/op/typed.hpp>
#include <core/validate.hpp>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace llmk::core::op {

// One argument as the entry point received it: its storage and element type.
struct Operand {
  detail::ArgInfo info{};  // the name and direction are the declaration's
  DType dtype = DType::f32;

  Operand() = default;
  template <class ExecSpace, bool Const>
  Operand(const TensorRefT<ExecSpace, Const>& r)
      : info(detail::arg_info("", r, false)), dtype(r.dtype()) {}
  // An int32 array (token ids): a Kokkos view of int.
  template <class View, class = std::enable_if_t<Kokkos::is_view<View>::value>>
  Operand(const View& v) : info(detail::arg_info("", v, false)) {}

  index_t size() const {
    index_t n = info.rank ? 1 : 0;
    for (int r = 0; r < info.rank; ++r) n *= info.extents[r];
    return n;
  }
};

// The sizes a call's extents bound, by symbol, and the argument each came from.
class Dims {
 public:
  const index_t* find(std::string_view symbol) const {
    for (int i = 0; i < n_; ++i)
      if (same(e_[i].symbol, symbol)) return &e_[i].value;
    return nullptr;
  }
  index_t operator[](std::string_view symbol) const {
    const index_t* v = find(symbol);
    if (!v) throw std::logic_error("llmk: size '" + std::string(symbol) + "' is not bound");
    return *v;
  }
  void bind(std::string_view symbol, index_t value, std::string_view from) {
    if (n_ == int(e_.size())) throw std::logic_error("llmk: too many sizes in one call");
    e_[n_++] = {symbol, value, from};
  }
  std::string_view source(std::string_view symbol) const {
    for (int i = 0; i < n_; ++i)
      if (same(e_[i].symbol, symbol)) return e_[i].from;
    return {};
  }

 private:
  // Symbols are a character or two: compared inline, not by a memcmp call
  // (its calls were a tenth of a small call's host time).
  static bool same(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (a[i] != b[i]) return false;
    return true;
  }
  struct Entry {
    std::string_view symbol;
    index_t value = 0;
    std::string_view from;
  };
  std::array<Entry, 12> e_{};
  int n_ = 0;
};

// A declaration's symbols in a call's form: "rows" as M (rank 2) or B, T;
// "3C" as C with its multiplier 3.
struct Symbols {
  std::array<std::string_view, 4> s{};
  std::array<int, 4> k{};
  int n = 0;
};
constexpr Symbols expand(std::string_view extents, bool rank3) {
  Symbols out;
  for_each_symbol(extents, [&](std::string_view sym) {
    const bool rows = sym == "rows";
    const Factor f = factor_of(sym);
    const std::string_view as[2] = {rows ? (rank3 ? "B" : "M") : f.symbol, "T"};
    for (int j = 0; j < (rows && rank3 ? 2 : 1); ++j) {
      out.s[out.n] = as[j];
      out.k[out.n++] = rows ? 1 : f.k;
    }
  });
  return out;
}
// Every argument's symbols in both forms, expanded once at compile time:
// forms<Op>()[rank3][i] (a call's host part is counted in microseconds).
template <class Op>
constexpr std::array<std::array<Symbols, Op::args.size()>, 2> forms() {
  std::array<std::array<Symbols, Op::args.size()>, 2> f{};
  for (int r = 0; r < 2; ++r)
    for (std::size_t i = 0; i < Op::args.size(); ++i) f[r][i] = expand(Op::args[i].extents, r);
  return f;
}
// "(B, T, 3C)"
inline std::string symbols_string(const Symbols& s) {
  std::string text = "(";
  for (int i = 0; i < s.n; ++i)
    text += (i ? ", " : "") + (s.k[i] > 1 || s.s[i].empty() ? std::to_string(s.k[i]) : "") +
            std::string(s.s[i]);
  return text + ")";
}

// A call whose extents fit its declaration: the arguments, the sizes, the form.
template <class ExecSpace, std::size_t N>
struct BoundCall {
  std::array<Operand, N> args;
  std::array<bool, N> present{};
  Dims dims;
  bool rank3 = false;
  detail::Arguments checked;  // for the workspace check under the context's lock

  index_t operator[](std::string_view symbol) const { return dims[symbol]; }
  index_t rows() const { return dims["M"]; }

  // Argument i as a rows × cols (or flat) view of T (const T for inputs);
  // an absent one is an empty view.
  template <class T>
  UnmanagedMatrix<T, ExecSpace> matrix(std::size_t i, index_t rows, index_t cols) const {
    if (!present[i]) return {};
    return UnmanagedMatrix<T, ExecSpace>(data<T>(i), rows, cols);
  }
  template <class T>
  UnmanagedVector<T, ExecSpace> vector(std::size_t i) const {
    if (!present[i]) return {};
    return UnmanagedVector<T, ExecSpace>(data<T>(i), args[i].size());
  }
  template <class T>
  T* data(std::size_t i) const {
    return static_cast<T*>(const_cast<void*>(args[i].info.data));
  }
};

[[noreturn]] inline void refuse_rank(const char* op, const detail::ArgInfo& a,
                                     const std::string& expected) {
  throw std::invalid_argument(std::string(op) + ": argument '" + a.name + "' has extents " +
                              detail::extents_string(a) + " but " + expected + " was expected");
}

// Binds the symbols of argument `a` that no earlier argument bound (it must
// then have the declaration's rank); a multiple ("3C") only where the extent
// is one, else it is left to the next argument that holds it.
inline void bind_symbols(const char* op, const detail::ArgInfo& a, const Symbols& sym, Dims& dims) {
  bool unbound = false;
  for (int i = 0; i < sym.n; ++i) unbound = unbound || !dims.find(sym.s[i]);
  if (!unbound) return;
  if (a.rank != sym.n)
    refuse_rank(op, a, "rank " + std::to_string(sym.n) + " " + symbols_string(sym));
  for (int i = 0; i < sym.n; ++i)
    if (!dims.find(sym.s[i]) && a.extents[i] % sym.k[i] == 0)
      dims.bind(sym.s[i], a.extents[i] / sym.k[i], a.name);
}

// Checks argument `a` against the bound sizes; the message (built only on a
// mismatch) names where each came from.
inline void check_extents(const char* op, const detail::ArgInfo& a, const Symbols& sym,
                          const Dims& dims) {
  bool ok = a.rank == sym.n;
  for (int i = 0; i < sym.n; ++i) {
    const index_t* v = dims.find(sym.s[i]);
    if (!v)  // only multiples held it, none a multiple
      refuse_rank(op, a,
                  symbols_string(sym) + " with " + std::to_string(sym.k[i]) +
                      std::string(sym.s[i]) + " a multiple of " + std::to_string(sym.k[i]));
    // extent = k · v, compared by division where k > 1: with a hand-made
    // extent (a TensorRef's) k · v can pass int64's range.
    ok = ok && (sym.k[i] == 1 ? a.extents[i] == *v
                              : a.extents[i] % sym.k[i] == 0 && a.extents[i] / sym.k[i] == *v);
  }
  if (ok) return;
  std::string values = "(", sources;
  for (int i = 0; i < sym.n; ++i) {
    const index_t v = *dims.find(sym.s[i]);
    const bool fits = v <= std::numeric_limits<index_t>::max() / sym.k[i];
    values += (i ? ", " : "") + (fits ? std::to_string(sym.k[i] * v)
                                      : std::to_string(sym.k[i]) + "·" + std::to_string(v));
    const std::string_view from = dims.source(sym.s[i]);
    if (from != a.name && !sym.s[i].empty())
      sources +=
          (sources.empty() ? "" : ", ") + std::string(sym.s[i]) + " from " + std::string(from);
  }
  refuse_rank(
      op, a,
      symbols_string(sym) + " = " + values + ")" + (sources.empty() ? "" : " (" + sources + ")"));
}

// The form of a call: "rows" as M or as B, T, decided by the rank of the
// leader, or where the leader has no rows (attention's att) of the first
// present argument in binding order that has.
template <class Op, class ExecSpace, std::size_t N>
bool is_rank3(const BoundCall<ExecSpace, N>& b) {
  std::size_t form = Op::leader;
  if (!has_rows(Op::args[Op::leader].extents))
    for (const std::size_t i : binding_order<Op>())
      if (form == Op::leader && b.present[i] && has_rows(Op::args[i].extents)) form = i;
  constexpr auto all = forms<Op>();
  const Symbols &as2 = all[0][form], &as3 = all[1][form];
  const detail::ArgInfo& f = b.args[form].info;
  if (f.rank == as3.n && as3.n != as2.n) return true;
  if (f.rank != as2.n)
    refuse_rank(Op::name, f,
                as3.n != as2.n ? "rank " + std::to_string(as2.n) + " " + symbols_string(as2) +
                                     " or rank " + std::to_string(as3.n) + " " + symbols_string(as3)
                               : "rank " + std::to_string(as2.n) + " " + symbols_string(as2));
  return false;
}

// The call's arguments checked against Op's declaration (see the top).
template <class Op, class ExecSpace, std::size_t N>
BoundCall<ExecSpace, N> bind(const std::array<Operand, N>& given) {
  static_assert(N == Op::args.size(), "one operand per declared argument");
  BoundCall<ExecSpace, N> b;
  b.args = given;
  b.dims.bind("", 1, "");  // a number in the extents ("1") multiplies this
  for (std::size_t i = 0; i < N; ++i) {
    b.args[i].info.name = Op::args[i].name.data();
    b.args[i].info.is_output = Op::args[i].output();
    b.present[i] = !(Op::args[i].optional && b.args[i].size() == 0);
  }
  // The leader binds first; B and T make M = B·T where "rows" are B, T.
  const Arg& lead = Op::args[Op::leader];
  const detail::ArgInfo& l = b.args[Op::leader].info;
  const bool rows_lead = has_rows(lead.extents);
  if (rows_lead) b.rank3 = is_rank3<Op>(b);
  constexpr auto f = forms<Op>();
  bind_symbols(Op::name, l, f[b.rank3][Op::leader], b.dims);
  if (!b.dims.find("M") && b.dims.find("B") && b.dims.find("T"))
    b.dims.bind("M", checked_product(b.dims["B"], b.dims["T"], Op::name, "M = B·T"), l.name);
  if (!rows_lead) b.rank3 = is_rank3<Op>(b);
  constexpr auto order = binding_order<Op>();
  for (const std::size_t i : order)
    if (b.present[i]) bind_symbols(Op::name, b.args[i].info, f[b.rank3][i], b.dims);
  for (const std::size_t i : order)
    if (b.present[i]) check_extents(Op::name, b.args[i].info, f[b.rank3][i], b.dims);
  // Storage and memory; an output that is exactly the input it may replace
  // (Arg::in_place_of) is checked once, as the output.
  for (std::size_t i = 0; i < N; ++i) {
    bool replaced = false;
    for (std::size_t o = 0; o < N; ++o) {
      const detail::ArgInfo &x = b.args[o].info, &y = b.args[i].info;
      if (Op::args[o].in_place_of != Op::args[i].name || x.data != y.data || x.bytes != y.bytes)
        continue;
      if (b.args[o].dtype != b.args[i].dtype)
        throw std::invalid_argument(std::string(Op::name) + ": argument '" + x.name + "' is '" +
                                    y.name + "' in place but of another element type");
      replaced = y.bytes != 0;
    }
    if (!replaced) b.checked.push_back(b.args[i].info);
  }
  detail::check_storage(Op::name, b.checked);
  detail::check_memory_space<ExecSpace>(Op::name, b.checked);
  return b;
}

// The inputs of one role share one element type (the first present one's);
// a float32 argument is float.
template <class Op, class ExecSpace, std::size_t N>
void check_shared_types(const BoundCall<ExecSpace, N>& b) {
  for (std::size_t i = 0; i < N; ++i) {
    const Arg& a = Op::args[i];
    if (!b.present[i] || b.args[i].size() == 0) continue;
    if (a.float32 && b.args[i].dtype != DType::f32)
      throw std::invalid_argument(std::string(Op::name) + ": argument '" + std::string(a.name) +
                                  "' is " + dtype_name(b.args[i].dtype) + " but " +
                                  dtype_name(DType::f32) + " was expected (in every precision)");
    if (a.role.empty() || a.output()) continue;
    std::size_t first = N;
    for (std::size_t j = 0; j < i && first == N; ++j)
      if (Op::args[j].role == a.role && !Op::args[j].output() && b.present[j] &&
          b.args[j].size() != 0)
        first = j;
    if (first == N || b.args[i].dtype == b.args[first].dtype) continue;
    std::string group;
    for (std::size_t j = 0; j < N; ++j)
      if (Op::args[j].role == a.role && !Op::args[j].output())
        group += (group.empty() ? "" : ", ") + std::string(Op::args[j].name);
    throw std::invalid_argument(std::string(Op::name) + ": argument '" + std::string(a.name) +
                                "' is " + dtype_name(b.args[i].dtype) + " but " +
                                std::string(Op::args[first].name) + " is " +
                                dtype_name(b.args[first].dtype) + "; the " + std::string(a.role) +
                                " (" + group + ") share one element type");
  }
}

// The call's element type in each role of the configurations (an output with
// no elements fits any: no role is decided by an empty output).
template <class Op, class ExecSpace, std::size_t N, class P0>
auto role_types(const BoundCall<ExecSpace, N>& b, PrecisionTag<P0>) {
  constexpr auto roles = P0::roles();
  std::array<RoleType, roles.size()> types{};
  for (std::size_t r = 0; r < roles.size(); ++r) {
    types[r] = {roles[r].name, DType::f32, false};
    for (std::size_t i = 0; i < N && !types[r].present; ++i) {
      if (Op::args[i].role != roles[r].name || !b.present[i]) continue;
      if (Op::args[i].output() && b.args[i].size() == 0) continue;
      types[r].type = b.args[i].dtype;
      types[r].present = true;
    }
  }
  return types;
}

template <class Op, class Options, class = void>
struct has_math : std::false_type {};
template <class Op, class Options>
struct has_math<Op, Options, std::void_t<decltype(Op::math(std::declval<const Options&>()))>>
    : std::true_type {};

template <class P, class... Ps>
PrecisionTag<P> first_precision(PrecisionList<P, Ps...>) {
  return {};
}

// Whether Op has check(bound, scalars...): what the declaration cannot say
// (a scalar's range against the bound sizes), checked before anything else
// is decided.
template <class Op, class Bound, class = void, class... Scalars>
struct has_check : std::false_type {};
template <class Op, class Bound, class... Scalars>
struct has_check<Op, Bound,
                 std::void_t<decltype(Op::check(std::declval<const Bound&>(),
                                                std::declval<const Scalars&>()...))>,
                 Scalars...> : std::true_type {};

// A whole call: bound, typed, matched, run. `scalars` (an operation's values
// that are no arrays: the classifier's dloss and V) go to Op::check and
// Op::problem after the bound call and the options.
template <class Op, class ExecSpace, class Options, std::size_t N, class... Scalars>
void call(Context<ExecSpace>& ctx, const Options& options, const std::array<Operand, N>& given,
          const Scalars&... scalars) {
  const BoundCall<ExecSpace, N> b = bind<Op, ExecSpace>(given);
  if constexpr (has_check<Op, BoundCall<ExecSpace, N>, void, Scalars...>::value)
    Op::check(b, scalars...);
  check_shared_types<Op>(b);
  Math math = Math::fp32;
  if constexpr (has_math<Op, Options>::value) math = Op::math(options);
  const auto types = role_types<Op>(b, first_precision(typename Op::Precisions{}));
  with_matching_precision<typename Op::Precisions>(Op::name, types, [&](auto ptag) {
    using P = typename decltype(ptag)::type;
    const auto p = Op::template problem<ExecSpace, P>(b, options, scalars...);
    with_impl<Op, ExecSpace, P>(options.impl, math, p.sizes(), [&](auto tag) {
      using I = typename decltype(tag)::type;
      run_impl<Op, I, ExecSpace, P>(ctx.state(), p, b.checked, options);
    });
  });
}

}  // namespace llmk::core::op
