// Choosing the implementation of a call from the list (implementations.hpp):
// by name or "auto", and checked against what the call asks for (execution
// space, precision configuration, math mode). Every error is an
// std::invalid_argument naming options.impl or options.math.
#pragma once

#include <core/registry.hpp>
#include <ops/matmul_backward/implementations.hpp>

#include <stdexcept>
#include <string>
#include <string_view>

namespace llmk::op::matmul_backward {

// Whether I can run a call of precision P with this math mode.
template <class I, class P>
constexpr bool runs_math(Math math) {
  return math == Math::fp32 || (I::tf32 && std::is_same_v<P, Fp32>);
}

inline std::string valid_names() {
  std::string valid = "auto";
  core::for_each_impl(Implementations{}, [&](auto tag) {
    valid += ", " + std::string(decltype(tag)::type::name);
  });
  return valid;
}

[[noreturn]] inline void throw_unknown(std::string_view impl) {
  throw std::invalid_argument(std::string(kOpName) + ": options.impl = '" + std::string(impl) +
                              "' is not an implementation (expected one of: " + valid_names() +
                              ")");
}

template <class I>
std::string precisions_of() {
  std::string list;
  for_each_precision(Precisions{}, [&](auto tag) {
    using P = typename decltype(tag)::type;
    if (I::template supports<P>) list += (list.empty() ? "" : ", ") + std::string(P::name);
  });
  return list;
}

// The name "auto" stands for with precision P, this math mode and these
// sizes on ExecSpace: the first implementation in the list that runs them
// and does not pass them over (auto_skips), or empty when none runs them.
template <class ExecSpace, class P>
std::string_view auto_name(Math math, const Sizes& sizes) {
  std::string_view first;
  core::for_each_impl(Implementations{}, [&](auto tag) {
    using I = typename decltype(tag)::type;
    if constexpr (available_on<I, ExecSpace> && I::template supports<P>) {
      if (first.empty() && runs_math<I, P>(math) && !I::template auto_skips<P>(sizes)) first = I::name;
    }
  });
  return first;
}

// The implementation named by `impl` ("auto" resolved), after checking that
// it exists, runs on ExecSpace, runs P and the math mode; f(Tag<I>{}) is
// called only for one that does (so f instantiates nothing it cannot run).
template <class ExecSpace, class P, class F>
void with_impl(std::string_view impl, Math math, const Sizes& sizes, F&& f) {
  if (math == Math::tf32 && !std::is_same_v<P, Fp32>) {
    throw std::invalid_argument(std::string(kOpName) +
                                ": options.math = Math::tf32 applies to float32 inputs, but "
                                "the call's precision is '" + std::string(P::name) + "'");
  }
  std::string_view name = impl;
  if (impl == "auto") {
    name = auto_name<ExecSpace, P>(math, sizes);
    if (name.empty()) {
      throw std::invalid_argument(std::string(kOpName) + ": no implementation available on '" +
                                  ExecSpace::name() + "' runs precision '" +
                                  std::string(P::name) + "' with options.math = Math::tf32");
    }
  }
  const bool known = core::visit_impl(Implementations{}, name, [&](auto tag) {
    using I = typename decltype(tag)::type;
    const std::string what = std::string(kOpName) + ": implementation '" + std::string(name) + "' ";
    if constexpr (!available_on<I, ExecSpace>) {
      throw std::invalid_argument(what + "is not available on backend '" + ExecSpace::name() +
                                  "'" +
                                  (I::compiled ? "" : " (its library is not part of this build)"));
    } else if constexpr (!I::template supports<P>) {
      throw std::invalid_argument(what + "does not run precision '" + std::string(P::name) +
                                  "' (it runs: " + precisions_of<I>() + ")");
    } else {
      if (!runs_math<I, P>(math))
        throw std::invalid_argument(what + "has no TF32 mode (options.math = Math::tf32)");
      f(tag);
    }
  });
  if (!known) throw_unknown(impl);
}

}  // namespace llmk::op::matmul_backward
