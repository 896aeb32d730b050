// Implementation "naive": a thread per element (ops/gelu_backward/kernels.hpp),
// the baseline the packs are measured and tested against.
#pragma once

#include <ops/gelu_backward/problem.hpp>

namespace llmk::op::gelu_backward {

struct Naive : ImplDefaults {
  static constexpr std::string_view name = "naive";

  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    kernels::gelu_backward_elements(call.exec, p.args);
  }
};

}  // namespace llmk::op::gelu_backward
