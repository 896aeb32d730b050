// Implementation "naive": the seed's CPU loops made parallel, one Kokkos thread
// per output element. Readable and slow; the baseline of the perf table. Runs
// every precision and fuses everything: each thread has its whole sum.
#pragma once

#include <kernels/gelu.hpp>
#include <kernels/update.hpp>
#include <ops/matmul_backward/problem.hpp>

namespace llmk::op::matmul_backward {

// (Kernels with KOKKOS_LAMBDA are free functions: nvcc's extended lambdas
// fail to compile inside static member function templates.)
// dinp[m, c] ⟵ (Σ_o dout[m, o] · weight[o, c]) · gelu'(pre_gelu[m, c])
template <class ExecSpace, class P>
void dinp_naive(const ExecSpace& exec, const Problem<ExecSpace, P>& p) {
  const auto dinp = p.dinp;
  const auto dout = p.dout;
  const auto weight = p.weight;
  const auto pre_gelu = p.pre_gelu;
  const bool gelu = p.has_gelu(), overwrite = p.overwrite_dinp;
  const index_t C = p.C, OC = p.OC;
  Kokkos::parallel_for(
      "llmk::dinp_naive", Range<ExecSpace>(exec, 0, p.M * C), KOKKOS_LAMBDA(const index_t i) {
        const index_t m = i / C, c = i % C;
        float sum = 0.0f;
        for (index_t o = 0; o < OC; ++o) sum += to_float(dout(m, o)) * to_float(weight(o, c));
        if (gelu) sum *= kernels::gelu_grad(to_float(pre_gelu(m, c)));
        kernels::update(dinp(m, c), sum, overwrite);
      });
}

// dweight[o, c] ⟵ Σ_m dout[m, o] · inp[m, c]
template <class ExecSpace, class P>
void dweight_naive(const ExecSpace& exec, const Problem<ExecSpace, P>& p) {
  const auto dweight = p.dweight;
  const auto dout = p.dout;
  const auto inp = p.inp;
  const bool overwrite = p.overwrite_dweight;
  const index_t M = p.M, C = p.C;
  Kokkos::parallel_for(
      "llmk::dweight_naive", Range<ExecSpace>(exec, 0, p.OC * C),
      KOKKOS_LAMBDA(const index_t i) {
        const index_t o = i / C, c = i % C;
        float sum = 0.0f;
        for (index_t m = 0; m < M; ++m) sum += to_float(dout(m, o)) * to_float(inp(m, c));
        kernels::update(dweight(o, c), sum, overwrite);
      });
}

struct Naive : ImplDefaults {
  static constexpr std::string_view name = "naive";
  static constexpr BiasPass bias = BiasPass::ColumnSumsNaive;
  template <class P>
  static constexpr bool supports = true;
  static constexpr bool fused_gelu = true;
  // 64-bit range policies throughout: no row limit.

  template <class ExecSpace, class P>
  static void workspace(core::WorkspaceSize&, const Sizes&) {}

  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    dinp_naive(call.exec, p);
    dweight_naive(call.exec, p);
    if (p.has_bias()) run_bias_pass(bias, call, p);
  }
};

}  // namespace llmk::op::matmul_backward
