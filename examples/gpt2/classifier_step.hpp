// GLUE, to be replaced by llmk::classifier_backward when it lands (issue 18):
// the fused softmax cross-entropy's backward, in plain portable Kokkos.
//   losses[i] = logsumexp(logits[i, :V]) − logits[i, target[i]]
//   dlogits[i, v] = (softmax(logits[i, :V])[v] − [v = target[i]]) · dloss   (v < V)
//   dlogits[i, v] = 0                                                    (V ≤ v < Vp)
// written in place of the logits (B·T rows of Vp), as llm.c's fused_classifier.
// One team per row; the team's reductions run in a fixed order for a fixed
// launch, so the result is the same from run to run. Targets are trusted:
// the program checks them ([0, V)) when it loads them.
#pragma once

#include "device.hpp"

#include <cmath>

namespace gpt2 {

template <class ExecSpace, class T>
void classifier_step(const ExecSpace& exec, const Buffer<ExecSpace, T>& logits,
                     const Buffer<ExecSpace, float>& losses,
                     const Buffer<ExecSpace, const int>& targets, float dloss, llmk::index_t rows,
                     llmk::index_t V, llmk::index_t Vp) {
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  using Member = typename Policy::member_type;
  Kokkos::parallel_for(
      "gpt2::classifier_step", Policy(exec, int(rows), Kokkos::AUTO),
      KOKKOS_LAMBDA(const Member& team) {
        const llmk::index_t row = team.league_rank();
        T* x = logits.data() + row * Vp;
        float top = -INFINITY;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, V),
            [&](const llmk::index_t v, float& m) {
              const float xv = llmk::to_float(x[v]);
              m = xv > m ? xv : m;
            },
            Kokkos::Max<float>(top));
        float sum = 0.0f;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, V),
            [&](const llmk::index_t v, float& s) { s += std::exp(llmk::to_float(x[v]) - top); },
            sum);
        const int target = targets(row);
        const float x_target = llmk::to_float(x[target]);
        team.team_barrier();  // every thread has read x[target] before any writes
        Kokkos::single(Kokkos::PerTeam(team),
                       [&]() { losses(row) = std::log(sum) + top - x_target; });
        const float inv_sum = 1.0f / sum;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, Vp), [&](const llmk::index_t v) {
          float d = 0.0f;
          if (v < V) {
            const float p = std::exp(llmk::to_float(x[v]) - top) * inv_sum;
            d = (p - (v == target ? 1.0f : 0.0f)) * dloss;
          }
          x[v] = llmk::from_float<T>(d);
        });
      });
}

}  // namespace gpt2
