// What an operation's list answers, the part every operation shares: the
// implementations' infos, whether a name is available on a space, what
// "auto" stands for, and the workspace a call needs.
#pragma once

#include <core/op/call.hpp>
#include <core/op/select.hpp>
#include <core/spaces.hpp>
#include <llmk/operation.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace llmk::core::op {

// The ImplInfo (llmk/operation.hpp) every implementation I declares.
template <class Op, class I>
ImplInfo impl_info() {
  std::vector<std::string> precisions, passed_over;
  for_each_precision(typename Op::Precisions{}, [&](auto tag) {
    using P = typename decltype(tag)::type;
    if constexpr (I::template supports<P>) {
      if (I::template runs_here<P>()) precisions.emplace_back(P::name);
      if (I::template auto_passes_over<P>()) passed_over.emplace_back(P::name);
    }
  });
  return {std::string(I::name), I::compiled, I::deterministic, precisions, I::tf32,
          I::rounds_once, I::host_blas, passed_over};
}

// Op::Info (ImplInfo or a struct derived from it) of every implementation,
// in list order; Op::describe<I>(info) fills what the operation adds.
template <class Op>
std::vector<typename Op::Info> impl_infos() {
  std::vector<typename Op::Info> v;
  for_each_impl(typename Op::Implementations{}, [&](auto tag) {
    using I = typename decltype(tag)::type;
    typename Op::Info info;
    static_cast<ImplInfo&>(info) = impl_info<Op, I>();
    Op::template describe<I>(info);
    v.push_back(info);
  });
  return v;
}

template <class Op>
std::vector<std::string> precision_list() {
  std::vector<std::string> v;
  for_each_precision(typename Op::Precisions{},
                     [&](auto tag) { v.emplace_back(decltype(tag)::type::name); });
  return v;
}

// Whether `impl` ("auto": always, the list ends with a portable one) is
// compiled in and runs on ExecSpace.
template <class Op, class ExecSpace>
bool available(std::string_view impl) {
  if (impl == "auto") return true;
  bool is_available = false;
  const bool known = visit_impl(typename Op::Implementations{}, impl, [&](auto tag) {
    is_available = available_on<typename decltype(tag)::type, ExecSpace>;
  });
  if (!known) throw_unknown<Op>(impl);
  return is_available;
}

template <class Op, class ExecSpace>
std::string auto_impl(std::string_view precision, Math math) {
  std::string name;
  with_precision_named<typename Op::Precisions>(Op::name, precision, [&](auto tag) {
    name = auto_name<Op, ExecSpace, typename decltype(tag)::type>(math, typename Op::Sizes{});
  });
  return name;
}

// The workspace bytes of a call of sizes s in the named precision, with the
// implementation `impl` ("auto" resolved as a call would).
template <class Op, class ExecSpace>
std::size_t workspace_bytes(const typename Op::Sizes& s, std::string_view impl, Math math,
                            std::string_view precision) {
  std::size_t bytes = 0;
  with_precision_named<typename Op::Precisions>(Op::name, precision, [&](auto ptag) {
    using P = typename decltype(ptag)::type;
    with_impl<Op, ExecSpace, P>(impl, math, s, [&](auto tag) {
      bytes = workspace_of<Op, typename decltype(tag)::type, ExecSpace, P>(s);
    });
  });
  return bytes;
}

// The internal Op of a public tag (llmk/operation.hpp): LLMK_DEFINE_QUERIES
// below says it.
template <class Tag>
struct OpOf;

}  // namespace llmk::core::op

namespace llmk {

template <class Tag>
const std::vector<typename Tag::ImplInfo>& OpQueries<Tag>::impls() {
  static const std::vector<typename Tag::ImplInfo> infos =
      core::op::impl_infos<typename core::op::OpOf<Tag>::type>();
  return infos;
}
template <class Tag>
const std::vector<std::string>& OpQueries<Tag>::precisions() {
  static const std::vector<std::string> names =
      core::op::precision_list<typename core::op::OpOf<Tag>::type>();
  return names;
}
template <class Tag, class ExecSpace>
bool SpaceQueries<Tag, ExecSpace>::available(std::string_view impl) {
  return core::op::available<typename core::op::OpOf<Tag>::type, ExecSpace>(impl);
}
template <class Tag, class ExecSpace>
std::string SpaceQueries<Tag, ExecSpace>::auto_impl(std::string_view precision, Math math) {
  return core::op::auto_impl<typename core::op::OpOf<Tag>::type, ExecSpace>(precision, math);
}

}  // namespace llmk

// In an operation's entry.cpp (namespace llmk): its tag's queries, defined
// for its internal Op and instantiated for every space.
#define LLMK_SPACE_QUERIES(Tag, Space) template struct SpaceQueries<Tag, Space>;
#define LLMK_DEFINE_QUERIES(Tag, InternalOp)    \
  template <>                                   \
  struct core::op::OpOf<Tag> {                  \
    using type = InternalOp;                    \
  };                                            \
  template struct OpQueries<Tag>;               \
  LLMK_FOR_EACH_SPACE_WITH(LLMK_SPACE_QUERIES, Tag)
