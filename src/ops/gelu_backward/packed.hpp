// Implementation "packed": a thread per 16-byte pack of each array, single
// elements for what is outside the packs (ops/gelu_backward/kernels.hpp). One
// read of dout and inp (and dinp when accumulating), one write of dinp. On a
// host: blocks of 4096 elements a thread step, each a vectorized loop.
#pragma once

#include <ops/gelu_backward/problem.hpp>

namespace llmk::op::gelu_backward {

struct Packed : ImplDefaults {
  static constexpr std::string_view name = "packed";
  // 64-bit range policies: no row limit.

  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    kernels::gelu_backward_packed(call.exec, p.args);
  }
};

}  // namespace llmk::op::gelu_backward
