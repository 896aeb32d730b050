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

#include <string_view>

namespace llmk::op::matmul_backward {

inline constexpr const char* kOpName = "llmk::matmul_backward";

// The sizes of a call, all that decides the workspace it needs.
struct Sizes {
  index_t M = 0, C = 0, OC = 0;
  bool bias = false;
};

// Validated rank-2 views and their sizes.
template <class ExecSpace>
struct Problem {
  Matrix<ExecSpace> dinp;         // M × C
  Matrix<ExecSpace> dweight;      // OC × C
  Vector<ExecSpace> dbias;        // OC, or empty: no bias gradient
  ConstMatrix<ExecSpace> dout;    // M × OC
  ConstMatrix<ExecSpace> inp;     // M × C
  ConstMatrix<ExecSpace> weight;  // OC × C
  index_t M = 0, C = 0, OC = 0;

  bool has_bias() const { return dbias.extent(0) != 0; }
  Sizes sizes() const { return {M, C, OC, has_bias()}; }

  // Rows [m0, m0 + count) of the activations, with the same dweight and dbias:
  // running the chunks in turn accumulates the whole problem's gradients.
  Problem rows(index_t m0, index_t count) const {
    const std::pair<index_t, index_t> r(m0, m0 + count);
    return {Kokkos::subview(dinp, r, Kokkos::ALL), dweight, dbias,
            Kokkos::subview(dout, r, Kokkos::ALL), Kokkos::subview(inp, r, Kokkos::ALL), weight,
            count, C, OC};
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

// dbias += Σ_rows dout with the given (non-fused) pass.
template <class ExecSpace>
void run_bias_pass(BiasPass pass, Call<ExecSpace>& call, const Vector<ExecSpace>& dbias,
                   const ConstMatrix<ExecSpace>& dout) {
  switch (pass) {
    case BiasPass::ColumnSumsNaive: return kernels::column_sums_naive(call.exec, dbias, dout);
    case BiasPass::ColumnSumsTeam: return kernels::column_sums_team(call.exec, dbias, dout);
    case BiasPass::ColumnSums: {
      const index_t M = dout.extent(0), OC = dout.extent(1);
      float* partial =
          call.workspace.template take<float>(kernels::column_sums_workspace<ExecSpace>(M, OC));
      return kernels::column_sums(call.exec, dbias, dout, partial);
    }
    case BiasPass::Fused: break;
  }
  throw std::logic_error("llmk: run_bias_pass called for a fused bias");
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
//   workspace<S>    adds the workspace one run() of these sizes takes
//   run<S>          the work, enqueued on call.exec; M, C, OC > 0
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
};

}  // namespace llmk::op::matmul_backward
