// The matmul backward as an operation of llmk: what every implementation
// receives (a validated Problem and a Call), what it declares about itself
// (ImplDefaults lists the traits), and the dbias passes implementations share.
#pragma once

#include <llmk/compat.hpp>
#include <llmk/matmul_backward.hpp>

#include <core/checked.hpp>
#include <core/context_state.hpp>
#include <core/workspace.hpp>
#include <kernels/column_sums.hpp>
#include <ops/matmul_backward/precisions.hpp>

#include <string_view>

namespace llmk::op::matmul_backward {

inline constexpr const char* kOpName = "llmk::matmul_backward";

// The sizes of a call, all that decides the workspace it needs (with the
// precision and options).
struct Sizes {
  index_t M = 0, C = 0, OC = 0;
  bool bias = false;
  bool gelu = false;
  bool overwrite_dinp = false, overwrite_dweight = false;
};

// Validated rank-2 views of one precision configuration P (precisions.hpp),
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

// What run() gets besides the problem. Everything that can fail (a handle, an
// algorithm choice) must be done before an implementation's first launch, so
// that a call that throws has written nothing.
template <class ExecSpace>
struct Call {
  const ExecSpace& exec;
  detail::ContextState<ExecSpace>& ctx;  // vendor resources: ctx.resource<R>()
  core::Workspace& workspace;            // as much as the implementation declared
  const MatmulBackwardOptions& options;
};

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

// The traits every implementation declares, with their defaults; an
// implementation derives from this and redeclares what differs:
//   name            its name in options.impl, the perf table, test names
//   compiled        whether its library is part of this build
//   available_on<S> whether it runs on execution space S (when compiled)
//   deterministic   bitwise identical results from run to run
//   bias            how it computes dbias (BiasPass)
//   max_rows        rows per run(): M is given in chunks of at most this
//                   (Kokkos 3's league sizes are int)
//   max_operand_elements
//                   the most elements any one matrix of a run() may have
//                   (libraries that count elements in int): the rows are
//                   chunked further to keep dout and inp below it, and a
//                   weight (OC·C) above it is refused
//   max_cols        C and OC above this are refused with std::invalid_argument
//   supports<P>     whether it runs precision configuration P (precisions.hpp)
//   tf32            whether it runs Math::tf32 (float32 inputs only)
//   rounds_once     whether a bf16 output is always its float sum rounded
//                   once (libraries may round intermediate results to bf16)
//   fused_gelu      whether GELU's backward is part of its dinp product (else
//                   a separate elementwise pass, product_output.hpp)
//   auto_skips<P>(s) true where "auto" should pass it over for a call of
//                   precision P and these sizes (a later implementation is
//                   measured faster there, or keeps a promise it cannot)
//   workspace<S, P> adds the workspace one run() of these sizes takes
//   run<S, P>       the work, enqueued on call.exec; M, C, OC > 0
struct ImplDefaults {
  static constexpr bool compiled = true;
  template <class ExecSpace>
  static constexpr bool available_on() {
    return true;
  }
  static constexpr bool deterministic = true;
  static constexpr BiasPass bias = BiasPass::ColumnSums;
  static constexpr index_t max_rows = core::kNoLimit;
  static constexpr index_t max_operand_elements = core::kNoLimit;
  static constexpr index_t max_cols = core::kNoLimit;
  template <class P>
  static constexpr bool supports = std::is_same_v<P, Fp32>;
  static constexpr bool tf32 = false;
  static constexpr bool rounds_once = true;
  static constexpr bool fused_gelu = false;
  template <class P>
  static bool auto_skips(const Sizes&) {
    return false;
  }
};

}  // namespace llmk::op::matmul_backward
