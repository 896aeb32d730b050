// Choosing an operation's implementation for a call from its list: by name or
// "auto", checked against what the call asks for (execution space, precision
// configuration, math mode). Every error is an std::invalid_argument naming
// options.impl or options.math.
//
// `Op` is an operation's description (e.g. ops/matmul_backward/op.hpp):
//   Op::name             "llmk::matmul_backward", the prefix of its messages
//   Op::Implementations  core::ImplList<...>, in the order "auto" prefers them
//   Op::Precisions       PrecisionList<...> (precision.hpp)
//   Op::Sizes            what decides the workspace and auto's choice
#pragma once

#include <core/op/impl_traits.hpp>
#include <core/op/precision.hpp>
#include <core/registry.hpp>
#include <llmk/host_blas.hpp>
#include <llmk/operation.hpp>

#include <Kokkos_Core.hpp>

#include <stdexcept>
#include <string>
#include <string_view>

namespace llmk::core::op {

// Whether I can run a call of precision P with this math mode (TF32 applies
// to float32 inputs only).
template <class I, class P>
constexpr bool runs_math(Math math) {
  return math == Math::fp32 || (I::tf32 && std::is_same_v<typename P::in, float>);
}

template <class Op>
std::string valid_names() {
  std::string valid = "auto";
  for_each_impl(typename Op::Implementations{},
                [&](auto tag) { valid += ", " + std::string(decltype(tag)::type::name); });
  return valid;
}

// A name as a message shows it: control characters (a NUL included, which
// would end the message at what()) as escapes, "naive\0x".
inline std::string printable_name(std::string_view name) {
  std::string out;
  for (const char ch : name) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c != 0x7f) {
      out += ch;
    } else if (c == 0) {
      out += "\\0";
    } else {
      const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

template <class Op>
[[noreturn]] void throw_unknown(std::string_view impl) {
  throw std::invalid_argument(std::string(Op::name) + ": options.impl = '" + printable_name(impl) +
                              "' is not an implementation (expected one of: " +
                              valid_names<Op>() + ")");
}

// The configurations I runs, "fp32, bf16".
template <class Op, class I>
std::string precisions_of() {
  std::string list;
  for_each_precision(typename Op::Precisions{}, [&](auto tag) {
    using P = typename decltype(tag)::type;
    if constexpr (I::template supports<P>)
      if (I::template runs_here<P>()) list += (list.empty() ? "" : ", ") + std::string(P::name);
  });
  return list;
}

// Whether I's library threads fit ExecSpace's for "auto": an implementation
// on the host BLAS runs there only where that BLAS shares Kokkos' threads
// (llmk/host_blas.hpp: a BLAS with its own pool starves the operations after it).
template <class I, class ExecSpace>
bool threads_fit() {
  if constexpr (I::host_blas &&
                Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible) {
    static const HostBlas blas = host_blas();  // what decides here is fixed for the process
    return host_blas_runs_auto(blas, ExecSpace().concurrency());
  } else {
    return true;
  }
}

// The name "auto" stands for with precision P, this math mode and these
// sizes on ExecSpace: the first implementation in the list that runs them,
// whose threads fit the space's and that does not pass them over
// (auto_passes_over, auto_skips), or empty when none runs them.
template <class Op, class ExecSpace, class P>
std::string_view auto_name(Math math, const typename Op::Sizes& sizes) {
  std::string_view first;
  for_each_impl(typename Op::Implementations{}, [&](auto tag) {
    using I = typename decltype(tag)::type;
    if constexpr (available_on<I, ExecSpace> && I::template supports<P>) {
      if (first.empty() && runs_math<I, P>(math) && threads_fit<I, ExecSpace>() &&
          I::template runs_here<P>() && !I::template auto_passes_over<P>() &&
          !I::template auto_skips<P>(sizes))
        first = I::name;
    }
  });
  return first;
}

// The implementation named by `impl` ("auto" resolved), after checking that
// it exists, runs on ExecSpace, runs P and the math mode; f(Tag<I>{}) is
// called only for one that does (so f instantiates nothing it cannot run).
template <class Op, class ExecSpace, class P, class F>
void with_impl(std::string_view impl, Math math, const typename Op::Sizes& sizes, F&& f) {
  if (math == Math::tf32 && !std::is_same_v<typename P::in, float>) {
    throw std::invalid_argument(std::string(Op::name) +
                                ": options.math = Math::tf32 applies to float32 inputs, but "
                                "the call's precision is '" + std::string(P::name) + "'");
  }
  std::string_view name = impl;
  if (impl == "auto") {
    name = auto_name<Op, ExecSpace, P>(math, sizes);
    if (name.empty()) {
      throw std::invalid_argument(std::string(Op::name) + ": no implementation available on '" +
                                  ExecSpace::name() + "' runs precision '" +
                                  std::string(P::name) + "'" +
                                  (math == Math::tf32 ? " with options.math = Math::tf32" : ""));
    }
  }
  const bool known = visit_impl(typename Op::Implementations{}, name, [&](auto tag) {
    using I = typename decltype(tag)::type;
    const std::string what =
        std::string(Op::name) + ": implementation '" + std::string(name) + "' ";
    if constexpr (!available_on<I, ExecSpace>) {
      throw std::invalid_argument(what + "is not available on backend '" + ExecSpace::name() +
                                  "'" +
                                  (I::compiled ? "" : " (its library is not part of this build)"));
    } else if constexpr (!I::template supports<P>) {
      throw std::invalid_argument(what + "does not run precision '" + std::string(P::name) +
                                  "' (it runs: " + precisions_of<Op, I>() + ")");
    } else {
      if (!I::template runs_here<P>())
        throw std::invalid_argument(what + "does not run precision '" + std::string(P::name) +
                                    "' on this processor (it runs here: " +
                                    precisions_of<Op, I>() + ")");
      if (!runs_math<I, P>(math))
        throw std::invalid_argument(what + "has no TF32 mode (options.math = Math::tf32)");
      f(tag);
    }
  });
  if (!known) throw_unknown<Op>(impl);
}

}  // namespace llmk::core::op
