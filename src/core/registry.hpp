// An operation's implementations as one ordered list of types, each declaring
// its traits (name, availability, determinism, ...). Names, lookup, "auto",
// availability and dispatch are derived by walking the list, in the manner of
// oneDNN's per-primitive implementation lists; availability per execution
// space is a constexpr trait, as KokkosKernels' *_tpl_spec_avail.
#pragma once

#include <string_view>

namespace llmk::core {

template <class... Impls>
struct ImplList {};

template <class T>
struct Tag {
  using type = T;
};

// f(Tag<I>{}) for each implementation I, in list order.
template <class... Impls, class F>
void for_each_impl(ImplList<Impls...>, F&& f) {
  (f(Tag<Impls>{}), ...);
}

// Calls f(Tag<I>{}) for the implementation named `name`; false if none is.
template <class... Impls, class F>
bool visit_impl(ImplList<Impls...> list, std::string_view name, F&& f) {
  bool found = false;
  for_each_impl(list, [&](auto tag) {
    if (!found && name == decltype(tag)::type::name) {
      found = true;
      f(tag);
    }
  });
  return found;
}

}  // namespace llmk::core
