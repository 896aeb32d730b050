// Calling an implementation with a context, the part every operation shares:
// acquire what the call needs in an order that lets it fail before its first
// write, then run the implementation over chunks of rows that stay within its
// limits, the chunks reusing one workspace.
//
// The operation's description `Op` (select.hpp) adds, for this:
//   Op::limits(s)        SizeLimits of sizes s (below)
//   Op::is_empty(s)      a problem without work for run() (a zero size)
//   Op::run_empty(call, p)           what such a problem still writes
//                                    (overwritten outputs: zeros, ...)
//   Op::empty_workspace<S, P>(size, s) the workspace run_empty takes
// (OpDefaults below: run_empty writes nothing, and needs no workspace)
// and its Problem has `M` rows and rows(m0, count), the problem of rows
// [m0, m0 + count) (later chunks accumulate into what earlier ones wrote).
//
// Composing: an implementation of one operation may run another's with its
// own call (run_chunked, with a Call of the other operation's options over
// the same context and workspace): the lock is held once, and the workspace
// nests, as long as the outer implementation's workspace() adds the inner's
// (workspace_of).
#pragma once

#include <core/context_state.hpp>
#include <core/validate.hpp>
#include <core/workspace.hpp>
#include <llmk/compat.hpp>
#include <llmk/operation.hpp>

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace llmk::core::op {

// The hooks of an operation that its own Op redeclares where it differs
// (struct Op : Spec, OpDefaults): an empty problem writes nothing (no output
// that it overwrites, as an elementwise output, has any element), and its
// implementations' infos add nothing to llmk::ImplInfo (queries.hpp).
struct OpDefaults {
  using Info = llmk::ImplInfo;
  template <class ExecSpace, class P, class Sizes>
  static void empty_workspace(WorkspaceSize&, const Sizes&) {}
  template <class Call, class Problem>
  static void run_empty(Call&, const Problem&) {}
  template <class I>
  static void describe(llmk::ImplInfo&) {}
};

// What run() gets besides the problem. Everything that can fail (a handle, an
// algorithm choice) must be done before an implementation's first launch, so
// that a call that throws has written nothing.
template <class ExecSpace, class Options>
struct Call {
  const ExecSpace& exec;
  detail::ContextState<ExecSpace>& ctx;  // vendor resources: ctx.resource<R>()
  Workspace& workspace;                  // as much as the implementation declared
  const Options& options;
};

// The sizes an implementation's limits apply to.
struct SizeLimits {
  index_t widest_row = 0;  // the most elements in a row of any row-indexed array
  std::vector<std::pair<const char*, index_t>> cols;  // column counts, by name
  std::pair<const char*, index_t> fixed;  // the largest array not indexed by rows
};

// Throws std::invalid_argument for sizes I refuses: columns above max_cols, a
// fixed array above max_operand_elements.
template <class Op, class I>
void check_limits(const typename Op::Sizes& s) {
  const SizeLimits l = Op::limits(s);
  const auto refuse = [](const std::string& what, index_t value, index_t limit) {
    throw std::invalid_argument(std::string(Op::name) + ": " + what + " = " +
                                std::to_string(value) + " exceeds " + std::to_string(limit) +
                                ", the most implementation '" + std::string(I::name) +
                                "' supports");
  };
  for (const auto& [name, value] : l.cols)
    if (value > I::max_cols) refuse(name, value, I::max_cols);
  if (l.fixed.second > I::max_operand_elements)
    refuse(l.fixed.first, l.fixed.second, I::max_operand_elements);
}

// The rows one run() of I takes: at most max_rows, and few enough that every
// row-indexed array stays within max_operand_elements.
template <class Op, class I>
index_t rows_per_run(const typename Op::Sizes& s) {
  const index_t widest = std::max<index_t>(Op::limits(s).widest_row, 1);
  return std::max<index_t>(1, std::min(I::max_rows, I::max_operand_elements / widest));
}

// The bytes a call of these sizes takes: the most one run() takes on a chunk
// of rows (the chunks reuse it in turn; all are the first's size but the
// last, and a smaller chunk may take more: split-K splits fewer tiles
// further), or what run_empty takes.
template <class Op, class I, class ExecSpace, class P>
std::size_t workspace_of(const typename Op::Sizes& s) {
  WorkspaceSize size;
  if (Op::is_empty(s)) {
    Op::template empty_workspace<ExecSpace, P>(size, s);
    return size.bytes();
  }
  const index_t per_run = rows_per_run<Op, I>(s);
  auto of_chunk = [&](const index_t rows) {
    WorkspaceSize chunk_size;
    typename Op::Sizes chunk = s;
    chunk.M = rows;
    I::template workspace<ExecSpace, P>(chunk_size, chunk);
    return chunk_size.bytes();
  };
  const std::size_t first = of_chunk(std::min(s.M, per_run));
  return s.M > per_run && s.M % per_run != 0 ? std::max(first, of_chunk(s.M % per_run)) : first;
}

// I's work on problem p with a call whose workspace holds workspace_of: over
// chunks of rows_per_run rows, or run_empty.
template <class Op, class I, class ExecSpace, class Options, class Problem>
void run_chunked(Call<ExecSpace, Options>& call, const Problem& p) {
  if (Op::is_empty(p.sizes())) return Op::run_empty(call, p);
  const Workspace whole = call.workspace;
  const index_t chunk = rows_per_run<Op, I>(p.sizes());
  for (index_t m0 = 0; m0 < p.M; m0 += chunk) {
    call.workspace = whole;  // each chunk carves the workspace afresh
    I::run(call, p.M <= chunk ? p : p.rows(m0, std::min(chunk, p.M - m0)));
  }
}

// Runs f(call) with everything a call needs acquired first, in the order that
// lets a call fail before its first write: Kokkos can launch from here; the
// locks (the context's; with Kokkos 3's host spaces, the space's); a user's
// workspace apart from the call's arguments `args` (as its entry point
// checked them); the workspace (allocated now if the context holds less).
template <class ExecSpace, class Options, class F>
void with_call(const char* op, detail::ContextState<ExecSpace>& ctx,
               std::size_t workspace_bytes, const detail::Arguments& args,
               const Options& options, F&& f) {
  const char* why = nullptr;
  if (!compat::can_launch_here<ExecSpace>(why))
    throw std::runtime_error(std::string(op) + " on " + ExecSpace::name() + " cannot run: " + why);
  std::unique_lock<std::mutex> shared_lock;
  if constexpr (compat::instances_share_state<ExecSpace>)
    shared_lock = std::unique_lock<std::mutex>(detail::shared_state_mutex<ExecSpace>());
  const std::lock_guard<std::mutex> lock(ctx.mutex());
  ctx.check_workspace_apart(op, args);
  Workspace workspace = ctx.workspace(workspace_bytes);
  Call<ExecSpace, Options> call{ctx.exec(), ctx, workspace, options};
  f(call);
}

// A whole call of implementation I on problem p, whose arguments are `args`:
// its limits, its workspace, the lock, the chunks.
// Whether Op has before_run(call, problem): a check that needs the call's
// queue (the classifier's targets against V), run after everything else that
// can fail and before the first write.
template <class Op, class Call, class Problem, class = void>
struct has_before_run : std::false_type {};
template <class Op, class Call, class Problem>
struct has_before_run<Op, Call, Problem,
                      std::void_t<decltype(Op::before_run(std::declval<Call&>(),
                                                          std::declval<const Problem&>()))>>
    : std::true_type {};

template <class Op, class I, class ExecSpace, class P, class Problem, class Options>
void run_impl(detail::ContextState<ExecSpace>& ctx, const Problem& p,
              const detail::Arguments& args, const Options& options) {
  check_limits<Op, I>(p.sizes());
  with_call(Op::name, ctx, workspace_of<Op, I, ExecSpace, P>(p.sizes()), args, options,
            [&](Call<ExecSpace, Options>& call) {
              if constexpr (has_before_run<Op, Call<ExecSpace, Options>, Problem>::value)
                Op::before_run(call, p);
              run_chunked<Op, I>(call, p);
            });
}

}  // namespace llmk::core::op
