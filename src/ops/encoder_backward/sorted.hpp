// Implementation "sorted": the positions sorted by token on the device (a
// counting sort in integers, stable by construction), then each token's rows
// added in position order, in runs of 32; dwpe's batch rows in order
// (ops/encoder_backward/kernels.hpp). On a host space the same sums by rows
// (host_rows.hpp).
#pragma once

#include <llmk/compat.hpp>
#include <ops/encoder_backward/host_rows.hpp>
#include <ops/encoder_backward/problem.hpp>

namespace llmk::op::encoder_backward {

struct Sorted : ImplDefaults {
  static constexpr std::string_view name = "sorted";
  // Positions and token counts are int in the sort's workspace.
  static constexpr index_t max_cols = core::kInt32Max;

  template <class ExecSpace, class P>
  static void workspace(core::WorkspaceSize& size, const Sizes& s) {
    size.add<int>(kernels::encoder_sort_ints(s.V, s.M));
    size.add<float>(kernels::encoder_partial_floats(s.M, s.C));
  }

  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    const index_t V = index_t(p.args.dwte.extent(0)), M = p.M;
    int* w = call.workspace.template take<int>(kernels::encoder_sort_ints(V, M));
    float* partials = call.workspace.template take<float>(kernels::encoder_partial_floats(M, p.C));
    const kernels::EncoderSortSpace space = kernels::encoder_sort_space(w, partials, V, M);
    if constexpr (compat::is_host_space<ExecSpace>) {
      const kernels::EncoderFound found = host_sort_positions(call.exec, p.args, space);
      if (found.first_bad >= 0 && p.args.check_tokens) refuse_token_at(call.exec, p, found.first_bad);
      host_sums(call.exec, p.args, space, found);
      return;
    }
    // The sort writes the workspace alone: a bad token is refused here
    // (unless the caller vouched for the tokens: then nothing is waited for).
    const kernels::EncoderFound found =
        kernels::encoder_sort_positions(call.exec, p.args, space, p.args.check_tokens);
    if (found.first_bad >= 0) refuse_token_at(call.exec, p, found.first_bad);
    kernels::encoder_dwte(call.exec, p.args, space, found);
    kernels::encoder_dwpe(call.exec, p.args);
  }
};

}  // namespace llmk::op::encoder_backward
