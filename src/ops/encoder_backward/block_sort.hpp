// Implementation "block_sort", for Kokkos::Cuda: the same sums in the same
// order as "sorted" (bitwise equal results), with the positions sorted by
// ONE block in one launch (CUB's BlockRadixSort of (token, position) pairs,
// stable, so each token's positions stay in increasing order) instead of
// "sorted"'s chain of Kokkos passes (clear, count, scan, fill, order). The
// same block lists the runs of ≤ 32 positions (block scans); the launch's
// other blocks add dwpe's rows meanwhile. One more launch sums the runs: a
// block a run (its positions staged in shared memory, every channel's
// loads of a batch of rows in flight at once); a token's last run to
// finish adds its runs' sums in order (an integer counter a token, so the
// order of the blocks cannot show). Two launches (three with dwte
// overwritten: its absent rows zeroed) where "sorted" has nine.
// Checked tokens (the default): the sorting block, which loads every token
// anyway, writes the first bad position before it sorts; dwpe's blocks
// beside it each read all the tokens (from L2, while the one block sorts)
// and write nothing if one is bad; the launches after the sort read the
// sort's verdict on the device. The host waits for the sort's launch (an
// event after it) while the sums run: a bad token is refused with every
// output unwritten. History (fp32, H200): the host waited for the sort's
// verdict before launching the sums and dwpe's rows, 0.106 ms a call (call
// H2 of 2026-12-03); then a check launch ahead of the sort whose verdict
// every later block read, 0.071 (call K3, the check 3 µs of device time);
// now the check costs no launch of its own.
// Why: on the H200 at GPT-2's B 8, T 1024 the encoder was ~0.11-0.12 ms
// against 0.03-0.04 for llm.c's atomics, most of it the sort's passes and
// the index chains before the first load of dout (ncu, docs/performance.md).
// Unchecked (call K3): 0.062 ms device time, 0.067 with events (2.0x the
// atomics).
// Defined in backends/cuda/encoder_block_sort.cpp (CUDA builds only).
//
// Positions beyond kBlockSortMaxPositions (one block's keys) run "sorted"'s
// kernels: the same results, its speed.
#pragma once

#include <llmk/compat.hpp>
#include <ops/encoder_backward/sorted.hpp>

namespace llmk::op::encoder_backward {

// 1024 threads × 16 keys: one block's sort (dynamic shared memory).
inline constexpr index_t kBlockSortMaxPositions = 16384;

// The workspace of a run, in ints (then partials' floats as
// "sorted"'s, kernels::encoder_partial_floats).
inline std::size_t block_sort_ints(index_t V, index_t M) { return std::size_t(V + 7 * M + 2); }

// Enqueues the sort (writing `ints` alone) with dwpe's rows beside it, then
// the runs' sums. With `check`, the sort's block writes the tokens'
// verdict, dwpe's blocks check the tokens themselves, and every later
// block that writes an output reads the verdict on the device first (a bad
// token: nothing is written); the host waits for the sort's launch (an
// event after it), not for the sums. Returns the first position whose token
// is outside [0, V), or −1 (every token in range, or unchecked).
template <class ExecSpace, class Args>
index_t block_sort_run(detail::ContextState<ExecSpace>& ctx, const ExecSpace& exec, const Args& a,
                       int* ints, float* partials, bool check);

struct BlockSort : core::op::OnCuda<ImplDefaults, LLMK_HAVE_CUDA> {
  static constexpr std::string_view name = "block_sort";
  static constexpr index_t max_cols = Sorted::max_cols;

  static bool fits(const Sizes& s) { return s.M <= kBlockSortMaxPositions; }

  template <class ExecSpace, class P>
  static void workspace(core::WorkspaceSize& size, const Sizes& s) {
    if (!fits(s)) return Sorted::workspace<ExecSpace, P>(size, s);
    size.add<int>(block_sort_ints(s.V, s.M));
    size.add<float>(kernels::encoder_partial_floats(s.M, s.C));
  }

  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    if (!fits(p.sizes())) return Sorted::run(call, p);
    const index_t V = index_t(p.args.dwte.extent(0)), M = p.M;
    int* ints = call.workspace.template take<int>(block_sort_ints(V, M));
    float* partials = call.workspace.template take<float>(kernels::encoder_partial_floats(M, p.C));
    // Checked, a bad token left every output unwritten: refused here.
    const index_t bad =
        block_sort_run(call.ctx, call.exec, p.args, ints, partials, p.args.check_tokens);
    if (bad >= 0) refuse_token_at(call.exec, p, bad);
  }
};

}  // namespace llmk::op::encoder_backward
