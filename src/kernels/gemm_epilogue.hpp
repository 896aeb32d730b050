// Epilogues of the tiled GEMM (kernels/gemm_tiled.hpp): what happens to an
// element's whole float sum over K before the GEMM writes it (the write is
// the GEMM's: kernels::update, = or +=, one rounding into D's type). An
// epilogue is a small copyable type with
//   float operator()(float sum, const GemmElement& e) const   the value written
//   bool identity() const   whether that is `sum` itself (a host's running
//                           sums may then accumulate in a float D, chunk by chunk)
// It runs once per element: where the micro-tile is written, or in split-K's
// second pass. A hook that needs an element's place (a causal mask, a
// per-row scale) gets it from GemmElement.
#pragma once

#include <kernels/gelu.hpp>
#include <llmk/types.hpp>

#include <type_traits>
#include <utility>

namespace llmk::kernels {

// Where an element is: its product in the batch (o·inner + i; 0 unbatched)
// and its row and column in D.
struct GemmElement {
  index_t batch, row, col;
};

// D ⟵ op(A)·op(B).
struct PlainEpilogue {
  KOKKOS_INLINE_FUNCTION float operator()(const float sum, const GemmElement&) const { return sum; }
  KOKKOS_INLINE_FUNCTION bool identity() const { return true; }
};

// D ⟵ α·op(A)·op(B) (attention's 1/√HS). With α = 1 the bits are
// PlainEpilogue's.
struct ScaleEpilogue {
  float alpha = 1.0f;
  KOKKOS_INLINE_FUNCTION float operator()(const float sum, const GemmElement&) const {
    return alpha * sum;
  }
  KOKKOS_INLINE_FUNCTION bool identity() const { return alpha == 1.0f; }
};

// GELU's backward (matmul's dinp): D ⟵ (op(A)·op(B)) ⊙ gelu'(pre_gelu), pre
// a row-major matrix of D's extents (null: no factor), the same for every
// product of a batch. Its code is compiled only into the kernels that use it
// (matmul's dinp; nvcc 13, sm_90, 128 registers: with GELU's code in it, the
// fused-bias dweight kernel spilled 28 bytes, without it none, all precisions;
// measured when GELU was a flag of the kernel).
template <class T>
struct GeluGradEpilogue {
  const T* pre = nullptr;
  index_t ld = 0;

  // From matmul's pre_gelu view (empty: none).
  template <class View>
  static GeluGradEpilogue of(const View& pre_gelu) {
    return {pre_gelu.extent(0) != 0 ? pre_gelu.data() : nullptr, index_t(pre_gelu.extent(1))};
  }
  KOKKOS_INLINE_FUNCTION float operator()(float sum, const GemmElement& e) const {
    if (pre) sum *= gelu_grad(to_float(pre[e.row * ld + e.col]));
    return sum;
  }
  KOKKOS_INLINE_FUNCTION bool identity() const { return pre == nullptr; }
  // The same on n consecutive sums of a row from `first` on, as one plain
  // loop: a host's micro-tile writes (gemm_tiled_args.hpp's write_d), which
  // GCC vectorizes. Element by element through write_d's lambdas it stayed
  // scalar: GPT-2's fcproj + GELU step took 186 ms against fc's 115 (the same
  // FLOPs; B 8, T 256 on 16 Xeon cores).
  KOKKOS_INLINE_FUNCTION void row(float* sums, const int n, const GemmElement& first) const {
    if (!pre) return;
    const T* p = pre + first.row * ld + first.col;
    for (int j = 0; j < n; ++j) sums[j] *= gelu_grad(to_float(p[j]));
  }
};

// A linear layer's forward (matmul_forward): D ⟵ sum + bias(col) (bias
// null: none); with pre (GPT-2's fc layer and its GELU) pre(row, col) ⟵
// that, rounded once into TPre, and D ⟵ gelu of it in float. Writes pre
// itself (an output of the GEMM besides D, as cuBLASLt's GELU_AUX), once per
// element like every epilogue.
template <class TBias, class TPre>
struct BiasGeluEpilogue {
  const TBias* bias = nullptr;
  TPre* pre = nullptr;
  index_t ld = 0;  // pre's

  KOKKOS_INLINE_FUNCTION float operator()(float sum, const GemmElement& e) const {
    if (bias) sum += to_float(bias[e.col]);
    if (!pre) return sum;
    pre[e.row * ld + e.col] = from_float<TPre>(sum);
    return gelu(sum);
  }
  KOKKOS_INLINE_FUNCTION bool identity() const { return bias == nullptr && pre == nullptr; }
  // The row form (a host's micro-tile writes, vectorized: GeluGradEpilogue's).
  KOKKOS_INLINE_FUNCTION void row(float* sums, const int n, const GemmElement& first) const {
    if (bias)
      for (int j = 0; j < n; ++j) sums[j] += to_float(bias[first.col + j]);
    if (!pre) return;
    TPre* const p = pre + first.row * ld + first.col;
    for (int j = 0; j < n; ++j) p[j] = from_float<TPre>(sums[j]);
    for (int j = 0; j < n; ++j) sums[j] = gelu(sums[j]);
  }
};

// Whether an epilogue has the row form above.
template <class E, class = void>
struct has_row_epilogue : std::false_type {};
template <class E>
struct has_row_epilogue<E, std::void_t<decltype(std::declval<const E&>().row(
                               std::declval<float*>(), 0, std::declval<const GemmElement&>()))>>
    : std::true_type {};

}  // namespace llmk::kernels
