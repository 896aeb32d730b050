// The matmul backward as an operation of llmk: what every implementation
// receives (a validated Problem and a Call), what it declares about itself
// (ImplDefaults), and the dbias passes implementations share.
#pragma once

#include <core/checked.hpp>
#include <core/op/call.hpp>
#include <core/op/impl_traits.hpp>
#include <core/workspace.hpp>
#include <kernels/column_sums.hpp>
#include <llmk/compat.hpp>
#include <llmk/matmul_backward.hpp>
#include <ops/matmul_backward/spec.hpp>
#include <string_view>

namespace llmk::op::matmul_backward {

// The sizes of a call, all that decides the workspace it needs (with the
// precision and options).
struct Sizes {
  index_t M = 0, C = 0, OC = 0;
  bool bias = false;
  bool gelu = false;
  bool overwrite_dinp = false, overwrite_dweight = false;
};

// Validated rank-2 views of one precision configuration P (spec.hpp),
// their sizes, and what each gradient receives.
template <class ExecSpace, class P = Fp32>
struct Problem {
  using precision = P;
  using In = typename P::in;
  Matrix<ExecSpace, typename P::dinp> dinp;        // M × C
  Matrix<ExecSpace, typename P::dweight> dweight;  // OC × C
  Vector<ExecSpace, typename P::dbias> dbias;      // OC, or empty: no bias gradient
  ConstMatrix<ExecSpace, In> dout;                 // M × OC
  ConstMatrix<ExecSpace, In> inp;                  // M × C
  ConstMatrix<ExecSpace, In> weight;               // OC × C
  ConstMatrix<ExecSpace, In> pre_gelu;             // M × C, or empty: no GELU
  index_t M = 0, C = 0, OC = 0;
  // true: the gradient is overwritten (=), false: accumulated (+=).
  bool overwrite_dinp = false, overwrite_dweight = false, overwrite_dbias = false;

  bool has_bias() const { return dbias.extent(0) != 0; }
  bool has_gelu() const { return pre_gelu.extent(0) != 0; }
  Sizes sizes() const {
    return {M, C, OC, has_bias(), has_gelu(), overwrite_dinp, overwrite_dweight};
  }

  // Rows [m0, m0 + count) of the activations, with the same dweight and dbias:
  // running the chunks in turn gives the whole problem's gradients (chunks
  // after the first accumulate into an overwritten dweight and dbias).
  Problem rows(index_t m0, index_t count) const {
    const std::pair<index_t, index_t> r(m0, m0 + count);
    Problem p = *this;
    p.dinp = Kokkos::subview(dinp, r, Kokkos::ALL);
    p.dout = Kokkos::subview(dout, r, Kokkos::ALL);
    p.inp = Kokkos::subview(inp, r, Kokkos::ALL);
    if (has_gelu()) p.pre_gelu = Kokkos::subview(pre_gelu, r, Kokkos::ALL);
    p.M = count;
    if (m0 > 0) p.overwrite_dweight = p.overwrite_dbias = false;
    return p;
  }
};

// What run() gets besides the problem (core/op/call.hpp).
template <class ExecSpace>
using Call = core::op::Call<ExecSpace, MatmulBackwardOptions>;

// How an implementation computes dbias: fused into one of its GEMMs, or one
// of the shared column-sum kernels (kernels/column_sums.hpp) after them.
enum class BiasPass { Fused, ColumnSumsNaive, ColumnSumsTeam, ColumnSums };

constexpr std::string_view bias_pass_name(BiasPass pass) {
  switch (pass) {
    case BiasPass::Fused: return "fused";
    case BiasPass::ColumnSumsNaive: return "column_sums_naive";
    case BiasPass::ColumnSumsTeam: return "column_sums_team";
    case BiasPass::ColumnSums: return "column_sums";
  }
  return "unknown";
}

template <class ExecSpace>
void add_bias_pass_workspace(core::WorkspaceSize& size, BiasPass pass, index_t M, index_t OC) {
  if (pass == BiasPass::ColumnSums)
    size.add<float>(std::size_t(kernels::column_sums_workspace<ExecSpace>(M, OC)));
}

// dbias ⟵ Σ_rows dout with the given (non-fused) pass.
template <class ExecSpace, class TB, class TI>
void run_bias_pass(BiasPass pass, Call<ExecSpace>& call, const Vector<ExecSpace, TB>& dbias,
                   const ConstMatrix<ExecSpace, TI>& dout, const bool overwrite) {
  switch (pass) {
    case BiasPass::ColumnSumsNaive:
      return kernels::column_sums_naive(call.exec, dbias, dout, overwrite);
    case BiasPass::ColumnSumsTeam:
      return kernels::column_sums_team(call.exec, dbias, dout, overwrite);
    case BiasPass::ColumnSums: {
      const index_t M = dout.extent(0), OC = dout.extent(1);
      float* partial =
          call.workspace.template take<float>(kernels::column_sums_workspace<ExecSpace>(M, OC));
      return kernels::column_sums(call.exec, dbias, dout, partial, overwrite);
    }
    case BiasPass::Fused: break;
  }
  throw std::logic_error("llmk: run_bias_pass called for a fused bias");
}

// The problem's bias gradient with the given (non-fused) pass.
template <class ExecSpace, class P>
void run_bias_pass(BiasPass pass, Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
  run_bias_pass(pass, call, p.dbias, p.dout, p.overwrite_dbias);
}

// The traits every matmul implementation declares: those of every operation
// (core/op/impl_traits.hpp lists them; max_cols applies to C and OC,
// max_operand_elements to dout and inp per chunk of rows and to weight), and
//   bias            how it computes dbias (BiasPass)
//   supports<P>     (default: fp32 only)
//   fused_gelu      whether GELU's backward is part of its dinp product (else
//                   a separate elementwise pass, kernels/gemm_output.hpp)
struct ImplDefaults : core::op::ImplDefaults {
  static constexpr BiasPass bias = BiasPass::ColumnSums;
  template <class P>
  static constexpr bool supports = std::is_same_v<P, Fp32>;
  static constexpr bool fused_gelu = false;
};

}  // namespace llmk::op::matmul_backward
