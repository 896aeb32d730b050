// Precision configurations, the part every operation shares. An operation
// names its configurations ONCE, in a list of types (its spec.hpp); each
// configuration P has
//   P::name                  "fp32", "bf16", ...
//   P::in                    the element type of the inputs that share one
//   P::roles()               every argument role and its element type, e.g.
//                            {{"inputs", f32}, {"dinp", f32}, ...}
// From that list alone this header matches a call's element types to a
// configuration, names them in errors, and finds a configuration by name.
#pragma once

#include <llmk/types.hpp>

#include <array>
#include <stdexcept>
#include <string>
#include <string_view>

namespace llmk::core::op {

template <class... Ps>
struct PrecisionList {};

template <class P>
struct PrecisionTag {
  using type = P;
};

// f(PrecisionTag<P>{}) for each configuration, in list order.
template <class... Ps, class F>
void for_each_precision(PrecisionList<Ps...>, F&& f) {
  (f(PrecisionTag<Ps>{}), ...);
}

// One argument role of a configuration and its element type.
struct Role {
  const char* name;  // "inputs", "dinp", ...
  DType type;
};

// A call's element type in a role; an absent argument (no dbias) fits any.
struct RoleType {
  const char* name;
  DType type;
  bool present = true;
};

// The configurations of the operations whose arguments are inputs of one
// type and gradients of inputs and parameters (matmul's, layernorm's), named
// alike in each: Base<In, DInp, DWeight, DBias> is the operation's own
// description of a configuration (its roles()).
//   fp32           everything float
//   bf16           everything bf16 (llm.c's training)
//   bf16-fp32grad  bf16 inputs and dinp, float parameter gradients
template <template <class, class, class, class> class Base>
struct Fp32Of : Base<float, float, float, float> {
  static constexpr std::string_view name = "fp32";
};
template <template <class, class, class, class> class Base>
struct Bf16Of : Base<bf16, bf16, bf16, bf16> {
  static constexpr std::string_view name = "bf16";
};
template <template <class, class, class, class> class Base>
struct Bf16Fp32GradOf : Base<bf16, bf16, float, float> {
  static constexpr std::string_view name = "bf16-fp32grad";
};

// The configurations of the forward operations: inputs of one element type
// and outputs of one (gelu's, layer norm's, matmul's, the encoder's and the
// residual's forward).
// Names::inputs is the operation's name for its inputs' role ("inputs",
// "param", ...), as its declaration's arguments say it.
//   fp32  everything float
//   bf16  everything bf16 (llm.c's training)
template <class Names, class In, class Out>
struct InOut {
  using in = In;
  using out = Out;
  static constexpr std::array<Role, 2> roles() {
    return {{{Names::inputs, dtype_of<In>()}, {"out", dtype_of<Out>()}}};
  }
};
template <class Names>
struct Fp32InOut : InOut<Names, float, float> {
  static constexpr std::string_view name = "fp32";
};
template <class Names>
struct Bf16InOut : InOut<Names, bf16, bf16> {
  static constexpr std::string_view name = "bf16";
};

// The configurations of the operations whose roles all hold one element
// type (the classifier's logits and dlogits, AdamW's params and grads, the
// squared norm's inputs): Names::roles lists the roles' names.
//   fp32  everything float
//   bf16  everything bf16 (llm.c's training)
template <class Names, class T>
struct AllOf {
  using in = T;
  static constexpr std::array<Role, Names::roles.size()> roles() {
    std::array<Role, Names::roles.size()> r{};
    for (std::size_t i = 0; i < r.size(); ++i) r[i] = {Names::roles[i], dtype_of<T>()};
    return r;
  }
};
template <class Names>
struct Fp32All : AllOf<Names, float> {
  static constexpr std::string_view name = "fp32";
};
template <class Names>
struct Bf16All : AllOf<Names, bf16> {
  static constexpr std::string_view name = "bf16";
};

// "fp32 (inputs float32, dinp float32, ...)"
template <class P>
std::string describe_precision() {
  std::string roles;
  for (const Role& r : P::roles())
    roles += (roles.empty() ? "" : ", ") + std::string(r.name) + " " + dtype_name(r.type);
  return std::string(P::name) + " (" + roles + ")";
}

// Whether a call's types (in the order of P::roles()) are configuration P's.
template <class P, std::size_t N>
bool matches(const std::array<RoleType, N>& call) {
  const auto roles = P::roles();
  static_assert(std::tuple_size<decltype(roles)>::value == N, "one type per role");
  for (std::size_t i = 0; i < N; ++i)
    if (call[i].present && call[i].type != roles[i].type) return false;
  return true;
}

template <std::size_t N>
std::string describe_types(const std::array<RoleType, N>& call) {
  std::string s;
  for (const RoleType& r : call)
    if (r.present) s += (s.empty() ? "" : ", ") + std::string(r.name) + " " + dtype_name(r.type);
  return s;
}

// f(PrecisionTag<P>{}) for the configuration of the call's types, or
// std::invalid_argument listing the configurations there are.
template <class List, std::size_t N, class F>
void with_matching_precision(const char* op, const std::array<RoleType, N>& call, F&& f) {
  bool matched = false;
  for_each_precision(List{}, [&](auto tag) {
    if (matched || !matches<typename decltype(tag)::type>(call)) return;
    matched = true;
    f(tag);
  });
  if (matched) return;
  std::string expected;
  for_each_precision(List{}, [&](auto tag) {
    expected += (expected.empty() ? "" : "; ") + describe_precision<typename decltype(tag)::type>();
  });
  throw std::invalid_argument(std::string(op) + ": the element types (" + describe_types(call) +
                              ") are not a precision configuration llmk runs; expected one of: " +
                              expected);
}

template <class List>
std::string precision_names(const char* separator = ", ") {
  std::string names;
  for_each_precision(List{}, [&](auto tag) {
    names += (names.empty() ? "" : separator) + std::string(decltype(tag)::type::name);
  });
  return names;
}

// f(PrecisionTag<P>{}) for the configuration named `precision`, or
// std::invalid_argument naming the ones there are.
template <class List, class F>
void with_precision_named(const char* op, std::string_view precision, F&& f) {
  bool found = false;
  for_each_precision(List{}, [&](auto tag) {
    if (found || decltype(tag)::type::name != precision) return;
    found = true;
    f(tag);
  });
  if (!found) {
    throw std::invalid_argument(std::string(op) + ": precision '" + std::string(precision) +
                                "' is not a configuration (expected one of: " +
                                precision_names<List>() + ")");
  }
}

}  // namespace llmk::core::op
