// Implementation "naive": the seed's CPU loops made parallel, one Kokkos thread
// per output element. Readable and slow; the baseline of the perf table.
#pragma once

#include <ops/matmul_backward/problem.hpp>

namespace llmk::op::matmul_backward {

// (Kernels with KOKKOS_LAMBDA are free functions: nvcc's extended lambdas
// fail to compile inside static member function templates.)
// dinp[m, c] += Σ_o dout[m, o] · weight[o, c]
template <class ExecSpace>
void dinp_naive(const ExecSpace& exec, const Problem<ExecSpace>& p) {
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
void dweight_naive(const ExecSpace& exec, const Problem<ExecSpace>& p) {
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

struct Naive : ImplDefaults {
  static constexpr std::string_view name = "naive";
  static constexpr BiasPass bias = BiasPass::ColumnSumsNaive;
  // 64-bit range policies throughout: no row limit.

  template <class ExecSpace>
  static void workspace(core::WorkspaceSize&, const Sizes&) {}

  template <class ExecSpace>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace>& p) {
    dinp_naive(call.exec, p);
    dweight_naive(call.exec, p);
    if (p.has_bias()) run_bias_pass(bias, call, p.dbias, p.dout);
  }
};

}  // namespace llmk::op::matmul_backward
