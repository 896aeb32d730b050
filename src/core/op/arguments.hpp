// A declared operation's arguments for given sizes and a precision, as the
// contract tests (tests/contract/spec_adapter.hpp) and llmk-perf
// (perf/harness/op_benchmark.hpp) make them: each argument's extents from
// its symbols and the sizes, its element type from its role in the
// precision. No Kokkos.
#pragma once

#include <core/op/precision.hpp>
#include <core/op/signature.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace llmk::core::op {

// The sizes of a problem by symbol ("B", "T", "C", "V", ...); "rows" is B·T.
class SymbolSizes {
 public:
  SymbolSizes(std::initializer_list<std::pair<std::string_view, std::int64_t>> sizes)
      : sizes_(sizes) {}
  std::int64_t operator[](std::string_view symbol) const {
    for (const auto& [name, value] : sizes_)
      if (name == symbol) return value;
    throw std::logic_error("the shape has no size '" + std::string(symbol) + "'");
  }
  // The same sizes with `symbol` set to `value` (a part of the problem).
  SymbolSizes with(std::string_view symbol, std::int64_t value) const {
    SymbolSizes s = *this;
    for (auto& [name, v] : s.sizes_)
      if (name == symbol) v = value;
    return s;
  }

 private:
  std::vector<std::pair<std::string_view, std::int64_t>> sizes_;
};

// An argument's extents: "rows" as M = B·T (rank 2) or as B, T (rank 3),
// "3C" as 3 × C.
inline std::vector<std::int64_t> extents_of(std::string_view symbols, const SymbolSizes& s,
                                            bool rank3 = false) {
  std::vector<std::int64_t> e;
  for_each_symbol(symbols, [&](std::string_view symbol) {
    if (symbol != "rows") {
      const Factor f = factor_of(symbol);
      e.push_back(f.literal() ? f.k : f.k * s[f.symbol]);
    } else if (rank3) {
      e.push_back(s["B"]), e.push_back(s["T"]);
    } else {
      e.push_back(s["B"] * s["T"]);
    }
  });
  return e;
}

// The element type of `role` in the precision named `precision`, and whether
// it is float in every precision (no bf16 through the raw-pointer entry).
template <class... Ps>
std::pair<DType, bool> role_dtype(PrecisionList<Ps...>, std::string_view precision,
                                  std::string_view role) {
  DType type = DType::f32;
  bool found = false, always_float = true;
  const auto look = [&](auto p) {
    using P = typename decltype(p)::type;
    for (const Role& r : P::roles()) {
      if (r.name != role) continue;
      always_float = always_float && r.type == DType::f32;
      if (P::name == precision) type = r.type, found = true;
    }
  };
  (look(PrecisionTag<Ps>{}), ...);
  if (!found)
    throw std::logic_error("no role '" + std::string(role) + "' in precision " +
                           std::string(precision));
  return {type, always_float};
}

// The element type of argument `a` in a precision (int32 ones: DType::f32,
// unused).
template <class Precisions>
DType arg_dtype(const Arg& a, std::string_view precision) {
  if (a.int32 || a.float32) return DType::f32;
  return role_dtype(Precisions{}, precision, a.role).first;
}

}  // namespace llmk::core::op
