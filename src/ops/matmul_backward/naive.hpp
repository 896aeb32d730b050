// Implementation "naive": the seed's CPU loops made parallel, one Kokkos thread
// per output element. Readable and slow; the baseline of the perf table.
#pragma once

#include <llmk/detail/problem.hpp>
#include <llmk/kernels/bias.hpp>

namespace llmk::kernels {

// dinp[m, c] += Σ_o dout[m, o] · weight[o, c]
template <class ExecSpace>
void dinp_naive(const ExecSpace& exec, const detail::Problem<ExecSpace>& p) {
  const auto dinp = p.dinp;
  const auto dout = p.dout;
  const auto weight = p.weight;
  const index_t C = p.C, OC = p.OC;
  Kokkos::parallel_for(
      "llmk::dinp_naive", Range<ExecSpace>(exec, 0, p.M * C), KOKKOS_LAMBDA(const index_t i) {
        const index_t m = i / C, c = i % C;
        float sum = 0.0f;
        for (index_t o = 0; o < OC; ++o) sum += dout(m, o) * weight(o, c);
        dinp(m, c) += sum;
      });
}

// dweight[o, c] += Σ_m dout[m, o] · inp[m, c]
template <class ExecSpace>
void dweight_naive(const ExecSpace& exec, const detail::Problem<ExecSpace>& p) {
  const auto dweight = p.dweight;
  const auto dout = p.dout;
  const auto inp = p.inp;
  const index_t M = p.M, C = p.C;
  Kokkos::parallel_for(
      "llmk::dweight_naive", Range<ExecSpace>(exec, 0, p.OC * C),
      KOKKOS_LAMBDA(const index_t i) {
        const index_t o = i / C, c = i % C;
        float sum = 0.0f;
        for (index_t m = 0; m < M; ++m) sum += dout(m, o) * inp(m, c);
        dweight(o, c) += sum;
      });
}

}  // namespace llmk::kernels

namespace llmk::detail {

template <class ExecSpace>
struct Implementation<ExecSpace, Impl::Naive> {
  static constexpr bool available = true;
  static void run(const ExecSpace& exec, const Problem<ExecSpace>& p,
                  const MatmulBackwardOptions&) {
    kernels::dinp_naive(exec, p);
    kernels::dweight_naive(exec, p);
    if (p.has_bias()) kernels::bias_naive(exec, p.dbias, p.dout);
  }
};

}  // namespace llmk::detail
