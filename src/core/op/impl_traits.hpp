// The traits every implementation of every operation declares, with their
// defaults. An operation's own defaults derive from these and add what is
// its own (matmul's bias pass, its GELU); an implementation derives from its
// operation's defaults and redeclares what differs:
//   name            its name in options.impl, the perf table, test names
//   compiled        whether its library is part of this build
//   available_on<S> whether it runs on execution space S (when compiled)
//   deterministic   bitwise identical results from run to run
//   max_rows        rows per run(): the rows are given in chunks of at most
//                   this (Kokkos 3's league sizes are int)
//   max_operand_elements
//                   the most elements any one array of a run() may have
//                   (libraries that count elements in int): the rows are
//                   chunked further to keep the row-indexed arrays below it,
//                   and a fixed operand (a weight) above it is refused
//   max_cols        columns above this are refused with std::invalid_argument
//   supports<P>     whether it runs precision configuration P
//   runs_here<P>()  whether it runs P on this process's processor (a
//                   library whose kernels for P need instructions the CPU
//                   may lack): its info then lists P only where it does, and
//                   a call of P is refused with std::invalid_argument
//   tf32            whether it runs Math::tf32 (float32 inputs only)
//   rounds_once     whether a bf16 output is always its float sum rounded
//                   once (libraries may round intermediate results to bf16)
//   host_blas       whether it runs on the process's BLAS on host spaces:
//                   "auto" then takes it only where that BLAS shares Kokkos'
//                   threads (llmk/host_blas.hpp)
//   auto_skips<P>(s) true where "auto" should pass it over for a call of
//                   precision P and sizes s (a later implementation is
//                   measured faster there, or keeps a promise it cannot)
//   auto_passes_over<P>()  the same whatever the sizes, for this build and
//                   CPU (a later implementation leads in P here); its info
//                   lists those precisions (ImplInfo::auto_passes_over)
//   workspace<S, P>(size, s)  adds the workspace one run() of sizes s takes
//   run<S, P>(call, problem)  the work, enqueued on call.exec; never called
//                   for an empty problem (Op::is_empty)
#pragma once

#include <core/checked.hpp>
#include <core/workspace.hpp>
#include <llmk/compat.hpp>

#include <type_traits>

namespace llmk::core::op {

struct ImplDefaults {
  static constexpr bool compiled = true;
  template <class ExecSpace>
  static constexpr bool available_on() {
    return true;
  }
  static constexpr bool deterministic = true;
  static constexpr index_t max_rows = kNoLimit;
  static constexpr index_t max_operand_elements = kNoLimit;
  static constexpr index_t max_cols = kNoLimit;
  static constexpr bool tf32 = false;
  static constexpr bool rounds_once = true;
  static constexpr bool host_blas = false;
  template <class P>
  static bool runs_here() {
    return true;
  }
  template <class P, class Sizes>
  static bool auto_skips(const Sizes&) {
    return false;
  }
  template <class P>
  static bool auto_passes_over() {
    return false;
  }
};

// The defaults of an operation whose implementations all run every
// precision and need no workspace (elementwise ones).
struct AnyPrecisionNoWorkspace : ImplDefaults {
  template <class P>
  static constexpr bool supports = true;
  template <class ExecSpace, class P, class Sizes>
  static void workspace(WorkspaceSize&, const Sizes&) {}
};

// The two traits of an implementation that runs on Kokkos::Cuda alone,
// over its operation's defaults `Base`: compiled where its code is built
// (`Compiled`: LLMK_HAVE_CUDA for the kernels of backends/cuda/,
// LLMK_HAVE_CUBLAS for cuBLAS's), available on Cuda only.
template <class Base, bool Compiled>
struct OnCuda : Base {
  static constexpr bool compiled = Compiled;
  template <class ExecSpace>
  static constexpr bool available_on() {
    return compat::is_cuda<ExecSpace>;
  }
};

template <class I, class ExecSpace>
constexpr bool available_on = I::compiled && I::template available_on<ExecSpace>();

}  // namespace llmk::core::op
