// Implementation "cublas", for Kokkos::Cuda only: llm.c's structure (its
// cuBLAS attention backward) with llmk's layout, and the causal mask's
// zeros skipped by blocks. The four products are cuBLAS batched GEMMs
// through the shared wrapper (backends/cublas/gemm.hpp) working directly on
// qkv's, dout's and dqkv's rows: no permuted copies. A launch takes every
// head of every sequence (NH batches of stride HS in B groups: one
// pointer-array launch). The queries are cut into a few blocks of rows
// (row_blocks_max: 4 in fp32, 2 in bf16; the last may be shorter); for the
// block of rows [r0, r1):
//   1. S ⟵ datt = dout_h · vᵀ               rows [r0, r1), columns [0, r1)
//   2. P ⟵ dpreatt = att ⊙ (S − drow), and A ⟵ att with its masked part
//      zeros, in one pass over rows (a warp per row; att's masked part is
//      never read), each row written up to its block's end r1
//   3. dq ⟵ α · P · k    rows [r0, r1), the keys [0, r1)
//      dv ⟵ Aᵀ · dout_h  rows [r0, r1), the queries [r0, T)
//      dk ⟵ α · Pᵀ · q   rows [r0, r1), the queries [r0, T)
// so each product skips the tiles above the diagonal: 4 launches a block,
// with about half the work and T × T traffic of whole products.
// P is written in place of S, and A is a second array, both of the inputs'
// type: in "bf16" datt and dpreatt are rounded to bf16 once each, as
// llm.c's (cuBLAS's bf16 GEMMs need both inputs bf16; S in bf16 halves the
// largest array's traffic: 0.564 -> 0.490 ms device time at B 8, T 1024,
// relative error 2.08e-3 -> 2.42e-3). Options.math = Math::tf32 runs the
// fp32 products on TF32 tensor cores. Declared here in every build (Ginkgo's
// way), defined in backends/cublas/attention_backward_cublas.cpp, compiled
// only with cuBLAS (LLMK_HAVE_CUBLAS). No CUDA header here.
#pragma once

#include <llmk/compat.hpp>
#include <ops/attention_backward/problem.hpp>

#include <cstddef>
#include <type_traits>

namespace llmk::op::attention_backward {

// The work of "cublas" (attention_backward_cublas.cpp), explicitly
// instantiated there for Kokkos::Cuda and both precisions.
template <class ExecSpace, class P>
void cublas_run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p);

struct Cublas : core::op::OnCuda<ImplDefaults, LLMK_HAVE_CUBLAS> {
  static constexpr std::string_view name = "cublas";
  static constexpr bool tf32 = true;
  // datt and dpreatt are rounded to bf16 (the softmax pass reads datt
  // rounded; dq and dk multiply dpreatt rounded), and with
  // dqkv accumulated cuBLAS rounds the product before adding the old bf16
  // value (matmul's cublas.hpp): not one rounding per element of dqkv.
  static constexpr bool rounds_once = false;

  static std::size_t tt_elements(const Sizes& s) { return std::size_t(s.M * s.NH * s.T * s.T); }

  // Blocks of query rows: at most row_blocks_max<P> of them, each a multiple
  // of 8 rows (every block's first row and column 16-byte aligned in a T × T
  // matrix of bf16, as the pointer-array launches need). n blocks do
  // (n + 1) / 2n of the whole products' work in 4n GEMM launches; fewer,
  // larger launches won on the H200 (B 8, T 1024, device time; calls K and
  // A2): fp32 16 blocks 1.872 ms, 8 1.589, 4 1.349, 3 1.631, 2 1.479; bf16
  // (S in bf16) 8 blocks 0.490, 4 0.423, 3 0.446, 2 0.401.
  template <class P>
  static constexpr index_t row_blocks_max = std::is_same_v<typename P::in, float> ? 4 : 2;
  template <class P>
  static index_t row_block(const Sizes& s) {
    constexpr index_t n = row_blocks_max<P>;
    const index_t rows = ((s.T + n - 1) / n + 7) / 8 * 8;
    return rows > 8 ? rows : 8;
  }
  template <class P>
  static index_t row_blocks(const Sizes& s) {
    return (s.T + row_block<P>(s) - 1) / row_block<P>(s);
  }
  // The GEMMs' pointer arrays (sequences as groups: none for one sequence):
  // A, B and D of every head, for each of the four products of each block.
  template <class P>
  static std::size_t pointer_count(const Sizes& s) {
    return s.M > 1 ? std::size_t(4 * row_blocks<P>(s) * 3 * s.M * s.NH) : 0;
  }
  template <class P>
  static constexpr bool float_inputs = std::is_same_v<typename P::in, float>;

  template <class ExecSpace, class P>
  static void workspace(core::WorkspaceSize& size, const Sizes& s) {
    size.add<typename P::in>(tt_elements(s));  // S, then P in place
    size.add<typename P::in>(tt_elements(s));  // A
    size.add<const void*>(pointer_count<P>(s));
  }

  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    cublas_run(call, p);
  }
};

}  // namespace llmk::op::attention_backward
