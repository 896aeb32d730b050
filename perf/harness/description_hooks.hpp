// What llmk-perf reads of an operation's description D (op_benchmark.hpp
// lists its members): the optional hooks' detection and defaults, the
// names of its precisions and implementations (its Variant's too), and its
// --impl and --precision options; and check_product, which descriptions'
// shape() use to refuse sizes.
#pragma once

#include "implementations.hpp"
#include "planned_rows.hpp"
#include "reference_io.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace llmk::perf {

// Refuses sizes whose product overflows 64 bits (the library would refuse
// them too, but the host problem is made first): "sizes too large: B·T·C ...".
inline void check_product(std::initializer_list<std::int64_t> factors, const std::string& what) {
  std::int64_t product = 1;
  for (const std::int64_t f : factors) {
    if (f > 0 && product > std::numeric_limits<std::int64_t>::max() / f)
      throw std::invalid_argument("sizes too large: " + what + " overflows 64 bits");
    product *= f;
  }
}

// Argument i's int32 values (D::int_values, where the operation has int32
// arguments). (D is the description, or its Variant: the problem's type is D's.)
template <class D, class Problem, class = void>
struct has_int_values : std::false_type {};
template <class D, class Problem>
struct has_int_values<D, Problem, std::void_t<decltype(D::int_values(
                                      std::declval<const Problem&>(), std::size_t(0)))>>
    : std::true_type {};
template <class D, class Problem>
const std::vector<std::int32_t>& int_values_of(const Problem& p, std::size_t i) {
  if constexpr (has_int_values<D, Problem>::value) {
    return D::int_values(p, i);
  } else {
    (void)p;
    throw std::logic_error("llmk-perf: argument " + std::to_string(i) + " is int32 but " +
                           std::string(D::Spec::name) + "'s description has no int_values()");
  }
}

// The optional members of D (above), or their defaults.
template <class D, class Options, class = void>
struct has_present : std::false_type {};
template <class D, class Options>
struct has_present<D, Options, std::void_t<decltype(D::present(std::declval<const Options&>()))>>
    : std::true_type {};
template <class D, class Options>
std::vector<bool> present_of(const Options& opt) {
  if constexpr (has_present<D, Options>::value) {
    return D::present(opt);
  } else {
    (void)opt;
    return {};
  }
}
template <class D, class = void>
struct has_in_place : std::false_type {};
template <class D>
struct has_in_place<D, std::void_t<decltype(D::in_place)>> : std::bool_constant<D::in_place> {};

// Whether Hook<D...> is well-formed: the optional hooks below.
template <class, template <class...> class Hook, class... D>
struct detected : std::false_type {};
template <template <class...> class Hook, class... D>
struct detected<std::void_t<Hook<D...>>, Hook, D...> : std::true_type {};
template <template <class...> class Hook, class... D>
inline constexpr bool has = detected<void, Hook, D...>::value;

template <class D>
using bytes_hook =
    decltype(D::bytes(std::declval<const typename D::Shape&>(), reference::Precision::fp32,
                      std::declval<const typename D::Options&>()));
template <class D>
using tf32_hook = decltype(D::tf32);
template <class D>
using refusal_hook = decltype(D::refuse_impls_without_precisions);
template <class D>
using set_threads_hook = decltype(D::set_threads(0));
template <class D>
using peer_skip_hook = decltype(D::peer_skip(std::declval<const typename D::Peer&>(),
                                             std::declval<const typename D::Shape&>(),
                                             std::declval<const typename D::Options&>()));
template <class D, class Arrays>
using threads_peer_args_hook =
    decltype(D::peer_args(std::declval<const Arrays&>(), std::declval<const std::string&>(),
                          std::declval<const typename D::Options&>(), 0));
template <class D>
using left_alone_hook = decltype(D::left_alone(std::declval<const typename D::Peer&>()));
template <class D, class Arrays, class Env>
using extend_row_hook = decltype(D::extend_row(
    std::declval<Row&>(), std::declval<const PlannedRow<typename D::Peer>&>(),
    std::declval<const Env&>(), std::declval<const Arrays&>(),
    std::declval<const typename D::Options&>()));

template <class D>
using variant_hook = typename D::Variant;
template <class D>
using kept_hook = typename D::Kept;

// The member type Hook<D> where D has it, else Default.
template <template <class> class Hook, class D, class Default, class = void>
struct hook_or {
  using type = Default;
};
template <template <class> class Hook, class D, class Default>
struct hook_or<Hook, D, Default, std::void_t<Hook<D>>> {
  using type = Hook<D>;
};
// What D::keep keeps of the problem for D::judge (unused without them).
template <class D>
using kept_of = typename hook_or<kept_hook, D, bool>::type;

template <class D>
constexpr bool with_tf32_of() {
  if constexpr (has<tf32_hook, D>) return D::tf32;
  return false;
}

// The precisions --precision may name (with_tf32_of: "tf32" after "fp32").
template <class D>
std::vector<std::string> precision_names_of() {
  const std::vector<std::string>& configs = llmk::precisions<typename D::Tag>();
  return with_tf32_of<D>() ? with_tf32(configs) : configs;
}

// A declared operation's name without its namespace ("llmk::gelu_backward":
// gelu_backward).
template <class Spec>
std::string op_name() {
  const std::string name(Spec::name);
  return name.substr(name.rfind(':') + 1);
}

// Whether `name` is one of D's Variant's implementations (none without one).
template <class D>
bool of_variant(const std::string& name) {
  if constexpr (has<variant_hook, D>)
    for (const ImplInfo& info : llmk::impls<typename D::Variant::Tag>())
      if (info.name == name) return true;
  (void)name;
  return false;
}

// The registry's entries: D's, then its Variant's.
template <class D>
auto registry_of() {
  if constexpr (has<variant_hook, D>) {
    std::vector<ImplInfo> all(llmk::impls<typename D::Tag>().begin(),
                              llmk::impls<typename D::Tag>().end());
    for (const ImplInfo& info : llmk::impls<typename D::Variant::Tag>()) all.push_back(info);
    return all;
  } else {
    return llmk::impls<typename D::Tag>();
  }
}

// The operation's implementations (and its Variant's) on every backend of this build.
template <class D>
const Implementations& implementations_of() {
  static const Implementations impls(registry_of<D>(), [](auto space, const std::string& name) {
    using Space = typename decltype(space)::type;
    if constexpr (has<variant_hook, D>)
      if (of_variant<D>(name)) return llmk::available<typename D::Variant::Tag, Space>(name);
    return llmk::available<typename D::Tag, Space>(name);
  });
  return impls;
}

// --impl and --precision.
template <class D>
void add_selection_options(CLI::App& app, typename D::Options& opt) {
  const Implementations& impls = implementations_of<D>();
  app.add_option("--impl", opt.impls, impls.option_help())
      ->capture_default_str()
      ->check(impls.validator());
  const std::vector<std::string> names = precision_names_of<D>();
  const std::string tf32 =
      with_tf32_of<D>() ? " (tf32: float32 storage with TF32 products, Math::tf32)" : "";
  app.add_option("--precision", opt.precisions,
                 "comma list of " + join(names) +
                     ", or 'all': each implementation and peer gets a row for each of them it "
                     "runs" + tf32)
      ->capture_default_str()
      ->check(list_validator(names, "precision", "PRECISIONS"));
}

}  // namespace llmk::perf
