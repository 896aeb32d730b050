// Implementation "row_in_shared", for Kokkos::Cuda, bf16 logits: the fused
// classifier with each row read from memory ONCE. A block of 1024 threads a
// row copies the whole row into shared memory (cp.async, 16 bytes a copy, a
// group a pack), each thread adding its own packs to a running (max, sum of
// exp(x − max)) as each lands, so that the arithmetic overlaps the row's
// arrival; the pairs are merged over the block in a fixed order, then one
// pass writes dlogits with streaming stores. A bf16 row of GPT-2's Vp =
// 50 304 is 98 KiB: two rows an SM (Hopper's 227 KiB), so one block's copy
// overlaps the other's arithmetic.
// H200, B 8, T 1024, Vp 50 304, device time (call H1 of 2026-12-03): 0.459
// ms, 87.0 % of a copy of the same bytes (0.399); llm.c's algorithm 0.588
// (D2 of 2026-12-02: 0.482, 83.8 %; "fused" 0.661). Steps: a first version, one online pass from
// shared memory after the whole row had landed, with "fused"'s per-element
// checks, 0.690 ms; a max pass, a sum pass and the write pass from shared
// memory, no column checks inside [0, V) and away from the target's pack,
// ex2.approx.ftz, 1024 threads: 0.521; the max taken as the packs land and
// the write pass's pairs rounded by one cvt (bf16x2): 0.508 (79.4 %, same
// run as 0.482); the online pass as the packs land, 0.482; the warps' pairs
// merged by warp 0's shuffles, not one thread's loop, 0.459 (0.481 before,
// same call).
// Defined in backends/cuda/classifier_row_in_shared.cpp, which only CUDA
// builds compile (LLMK_HAVE_CUDA); no CUDA header here.
//
// What it does not run: fp32 (a row of 196 KiB leaves one block an SM,
// nothing to overlap: "fused"), rows wider than kRowInSharedMaxVp (an
// explicit request is refused before any write; "auto" passes it over).
// Rows not aligned to 16 bytes or Vp not a multiple of 8 run the "fused"
// kernel (the copies are 16 bytes).
#pragma once

#include <llmk/compat.hpp>
#include <ops/classifier_backward/fused.hpp>
#include <ops/classifier_backward/problem.hpp>

#include <stdexcept>
#include <string>
#include <type_traits>

namespace llmk::op::classifier_backward {

// Two rows' shared memory an SM of 228 KiB (1 KiB of it reserved per block):
// 56 832 bf16 (111 KiB) a row.
inline constexpr index_t kRowInSharedMaxVp = 56832;

template <class ExecSpace>
void row_in_shared_run(const ExecSpace& exec, const kernels::ClassifierArgs<ExecSpace, bf16>& a);

struct RowInShared : core::op::OnCuda<ImplDefaults, LLMK_HAVE_CUDA> {
  static constexpr std::string_view name = "row_in_shared";
  template <class P>
  static constexpr bool supports = std::is_same_v<P, Bf16>;
  // A block a row: the grid's x counts them (2³¹ − 1).
  static constexpr index_t max_rows = core::kInt32Max;
  static constexpr index_t max_cols = Fused::max_cols;

  template <class P>
  static bool auto_skips(const Sizes& s) {
    return s.Vp > kRowInSharedMaxVp;
  }

  template <class ExecSpace, class P>
  static void workspace(core::WorkspaceSize&, const Sizes&) {}

  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    if (p.Vp > kRowInSharedMaxVp) {
      throw std::invalid_argument(std::string(kOpName) +
                                  ": implementation 'row_in_shared' holds rows of at most " +
                                  std::to_string(kRowInSharedMaxVp) + " columns, but Vp = " +
                                  std::to_string(p.Vp) + " (use 'fused' or 'auto')");
    }
    row_in_shared_run(call.exec, p.args);
  }
};

}  // namespace llmk::op::classifier_backward
