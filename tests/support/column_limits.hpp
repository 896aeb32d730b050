// An operation's implementations that refuse columns above a limit (their
// max_cols, below core::kNoLimit) and are available on Space, read from the
// operation's internal list of implementations (its ops/<op>/op.hpp; the
// validation binary links llmk_internal): each operation's ColumnLimits tests.
#pragma once

#include <core/checked.hpp>
#include <core/op/impl_traits.hpp>
#include <core/registry.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace llmk_test {

struct LimitedImpl {
  std::string name;
  std::int64_t max_cols;
};

template <class Implementations, class Space>
std::vector<LimitedImpl> impls_with_column_limits() {
  std::vector<LimitedImpl> v;
  llmk::core::for_each_impl(Implementations{}, [&](auto tag) {
    using I = typename decltype(tag)::type;
    if (I::max_cols < llmk::core::kNoLimit && llmk::core::op::available_on<I, Space>)
      v.push_back({std::string(I::name), I::max_cols});
  });
  return v;
}

}  // namespace llmk_test
