// The portable implementations of the matmul forward: one thread per output
// element ("naive"), and the tiled GEMM with the bias and GELU as its
// epilogue ("tiled").
#pragma once

#include <kernels/gelu.hpp>
#include <kernels/gemm_tiled.hpp>
#include <kernels/update.hpp>
#include <ops/matmul_forward/problem.hpp>

namespace llmk::op::matmul_forward {

// out[m, o] ⟵ epilogue(Σ_c inp[m, c] · weight[o, c]): both rows contiguous.
// Also the call with C = 0 (out ⟵ bias, through GELU), which no GEMM takes.
// (A free function: nvcc's extended lambdas fail in static member functions.)
template <class ExecSpace, class P>
void matmul_forward_naive(const ExecSpace& exec, const Problem<ExecSpace, P>& p) {
  using Out = typename P::out;
  const auto inp = p.inp;
  const auto weight = p.weight;
  const kernels::BiasGeluEpilogue<typename P::in, Out> epilogue{
      p.has_bias() ? p.bias.data() : nullptr, p.has_gelu() ? p.pre_gelu.data() : nullptr, p.OC};
  Out* const out = p.out.data();
  const bool overwrite = p.overwrite_out;
  const index_t C = p.C, OC = p.OC;
  Kokkos::parallel_for(
      "llmk::matmul_forward_naive", Range<ExecSpace>(exec, 0, p.M * OC),
      KOKKOS_LAMBDA(const index_t i) {
        const index_t m = i / OC, o = i % OC;
        float sum = 0.0f;
        for (index_t c = 0; c < C; ++c) sum += to_float(inp(m, c)) * to_float(weight(o, c));
        kernels::update(out[i], epilogue(sum, kernels::GemmElement{0, m, o}), overwrite);
      });
}

// What a library GEMM left undone, in one pass over the sums it wrote into
// pre_gelu (GELU) or out: + bias (add_bias: written back), then with GELU
// out ⟵ gelu(pre_gelu), = or +=. ("cublaslt" where an epilogue is refused,
// "kokkoskernels" always.)
template <class ExecSpace, class P>
void matmul_forward_finish(const ExecSpace& exec, const Problem<ExecSpace, P>& p,
                           const bool add_bias) {
  using Out = typename P::out;
  Out* const out = p.out.data();
  Out* const pre = p.has_gelu() ? p.pre_gelu.data() : nullptr;
  const typename P::in* const bias = add_bias ? p.bias.data() : nullptr;
  const bool overwrite = p.overwrite_out;
  const index_t OC = p.OC;
  Kokkos::parallel_for(
      "llmk::matmul_forward_finish", Range<ExecSpace>(exec, 0, p.M * OC),
      KOKKOS_LAMBDA(const index_t i) {
        Out* const sums = pre ? pre : out;
        float x = to_float(sums[i]);
        if (bias) {
          x += to_float(bias[i % OC]);
          sums[i] = from_float<Out>(x);
        }
        if (pre) kernels::update(out[i], kernels::gelu(x), overwrite);
      });
}

// out (M × OC) ⟵ inp (M × C) · weightᵀ: the NT form of the tiled GEMM.
template <class ExecSpace, class P>
using ForwardGemm =
    kernels::TiledGemm<kernels::GemmForm<false, true>, ExecSpace, typename P::in,
                       typename P::out,
                       kernels::BiasGeluEpilogue<typename P::in, typename P::out>>;

inline kernels::GemmShape forward_shape(const Sizes& s) { return {s.M, s.OC, s.C}; }

template <class ExecSpace, class P>
void matmul_forward_tiled(const ExecSpace& exec, const Problem<ExecSpace, P>& p,
                          float* split_k_workspace) {
  using kernels::gemm_operand;
  const kernels::BiasGeluEpilogue<typename P::in, typename P::out> epilogue{
      p.has_bias() ? p.bias.data() : nullptr, p.has_gelu() ? p.pre_gelu.data() : nullptr, p.OC};
  ForwardGemm<ExecSpace, P>(forward_shape(p.sizes()), gemm_operand(p.out), gemm_operand(p.inp),
                            gemm_operand(p.weight), p.overwrite_out, epilogue)
      .with_split_k(split_k_workspace)
      .run(exec, "llmk::matmul_forward_tiled");
}

}  // namespace llmk::op::matmul_forward
