// The layer-norm forward's kernels, per row m of C:
//   mean = Σ x / C,  rstd = 1/√(Σ (x − mean)² / C + eps),
//   out ⟵ (x − mean)·rstd·weight + bias;   mean(m), rstd(m) written.
// Two passes in float (the mean, then the squared deviations: no
// cancellation of E[x²] − mean²), then the outputs; sums in an order fixed by
// C and the space's binary, the same bits on every host space.
//
//  - layernorm_forward_naive: a thread per row, sums in order (the baseline);
//  - layernorm_forward_rows: on a GPU a row per 32 vector lanes (a warp),
//    kRowsPerTeam rows a team, the sums reduced across the lanes; on a host
//    a row per thread step, each pass a vectorized loop (LLMK_SIMD_SUM).
#pragma once

#include <kernels/tuning.hpp>
#include <kernels/update.hpp>
#include <llmk/compat.hpp>
#include <llmk/types.hpp>

#include <Kokkos_Core.hpp>

namespace llmk::op::layernorm_forward {

template <class ExecSpace, class In, class Out>
struct Args {
  template <class T>
  using Vector = Kokkos::View<T*, Kokkos::LayoutRight, typename ExecSpace::device_type,
                              Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  template <class T>
  using Matrix = Kokkos::View<T**, Kokkos::LayoutRight, typename ExecSpace::device_type,
                              Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Matrix<Out> out;
  Vector<float> mean, rstd;
  Matrix<const In> inp;
  Vector<const In> weight, bias;  // bias empty: none
  float eps = 1e-5f;
  bool overwrite_out = true;
};

// rstd from the sum of squared deviations (0 and 1/√eps without columns).
KOKKOS_INLINE_FUNCTION float rstd_of(const float squares, const index_t C, const float eps) {
  return 1.0f / compat::sqrt((C > 0 ? squares / float(C) : 0.0f) + eps);
}

template <class ExecSpace, class A>
void layernorm_forward_naive(const ExecSpace& exec, const A& a) {
  const index_t C = index_t(a.inp.extent(1));
  const bool bias = a.bias.extent(0) != 0;
  Kokkos::parallel_for(
      "llmk::layernorm_forward_naive", Range<ExecSpace>(exec, 0, index_t(a.inp.extent(0))),
      KOKKOS_LAMBDA(const index_t m) {
        float sum = 0;
        for (index_t c = 0; c < C; ++c) sum += to_float(a.inp(m, c));
        const float mean = C > 0 ? sum / float(C) : 0.0f;
        float squares = 0;
        for (index_t c = 0; c < C; ++c) {
          const float d = to_float(a.inp(m, c)) - mean;
          squares += d * d;
        }
        const float rstd = rstd_of(squares, C, a.eps);
        for (index_t c = 0; c < C; ++c) {
          const float y = (to_float(a.inp(m, c)) - mean) * rstd * to_float(a.weight(c)) +
                          (bias ? to_float(a.bias(c)) : 0.0f);
          kernels::update(a.out(m, c), y, a.overwrite_out);
        }
        a.mean(m) = mean;
        a.rstd(m) = rstd;
      });
}

// A row on a host thread: raw pointers, each pass a vectorized loop.
template <class In, class Out>
inline void layernorm_forward_row(Out* out, float& mean_out, float& rstd_out, const In* x,
                                  const In* weight, const In* bias, const index_t C,
                                  const float eps, const bool overwrite) {
  float sum = 0;
  LLMK_SIMD_SUM(sum)
  for (index_t c = 0; c < C; ++c) sum += to_float(x[c]);
  const float mean = C > 0 ? sum / float(C) : 0.0f;
  float squares = 0;
  LLMK_SIMD_SUM(squares)
  for (index_t c = 0; c < C; ++c) {
    const float d = to_float(x[c]) - mean;
    squares += d * d;
  }
  const float rstd = rstd_of(squares, C, eps);
  LLMK_SIMD
  for (index_t c = 0; c < C; ++c) {
    const float y =
        (to_float(x[c]) - mean) * rstd * to_float(weight[c]) + (bias ? to_float(bias[c]) : 0.0f);
    out[c] = from_float<Out>(overwrite ? y : to_float(out[c]) + y);
  }
  mean_out = mean;
  rstd_out = rstd;
}

// Rows a team on a GPU (each on its 32 vector lanes).
inline constexpr int kRowsPerTeam = 4;
inline constexpr int kLanes = 32;

template <class ExecSpace, class A>
void layernorm_forward_rows(const ExecSpace& exec, const A& a) {
  const index_t M = index_t(a.inp.extent(0)), C = index_t(a.inp.extent(1));
  if constexpr (compat::is_host_space<ExecSpace>) {
    using Out = typename decltype(a.out)::value_type;
    using In = typename decltype(a.inp)::non_const_value_type;
    Out* const out = a.out.data();
    const In* const inp = a.inp.data();
    const In* const weight = a.weight.data();
    const In* const bias = a.bias.extent(0) != 0 ? a.bias.data() : nullptr;
    float* const mean = a.mean.data();
    float* const rstd = a.rstd.data();
    const float eps = a.eps;
    const bool overwrite = a.overwrite_out;
    Kokkos::parallel_for("llmk::layernorm_forward_rows", Range<ExecSpace>(exec, 0, M),
                         [=](const index_t m) {
                           layernorm_forward_row(out + m * C, mean[m], rstd[m], inp + m * C, weight,
                                                 bias, C, eps, overwrite);
                         });
  } else {
    using Policy = Kokkos::TeamPolicy<ExecSpace, Kokkos::IndexType<index_t>>;
    const bool bias = a.bias.extent(0) != 0;
    Kokkos::parallel_for(
        "llmk::layernorm_forward_rows",
        Policy(exec, (M + kRowsPerTeam - 1) / kRowsPerTeam, kRowsPerTeam, kLanes),
        KOKKOS_LAMBDA(const typename Policy::member_type& team) {
          const index_t m = team.league_rank() * kRowsPerTeam + team.team_rank();
          if (m >= M) return;
          float sum = 0;
          Kokkos::parallel_reduce(
              Kokkos::ThreadVectorRange(team, C),
              [&](const index_t c, float& s) { s += to_float(a.inp(m, c)); }, sum);
          const float mean = C > 0 ? sum / float(C) : 0.0f;
          float squares = 0;
          Kokkos::parallel_reduce(
              Kokkos::ThreadVectorRange(team, C),
              [&](const index_t c, float& s) {
                const float d = to_float(a.inp(m, c)) - mean;
                s += d * d;
              },
              squares);
          const float rstd = rstd_of(squares, C, a.eps);
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, C), [&](const index_t c) {
            const float y = (to_float(a.inp(m, c)) - mean) * rstd * to_float(a.weight(c)) +
                            (bias ? to_float(a.bias(c)) : 0.0f);
            kernels::update(a.out(m, c), y, a.overwrite_out);
          });
          Kokkos::single(Kokkos::PerThread(team), [&] {
            a.mean(m) = mean;
            a.rstd(m) = rstd;
          });
        });
  }
}

}  // namespace llmk::op::layernorm_forward
