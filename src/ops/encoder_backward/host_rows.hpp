// The encoder backward on a host space, by rows rather than elements (the
// sorted implementation's host path; kernels.hpp has the device's):
//  1. on the calling thread, a counting sort of the positions by token,
//     filled in position order (so each bucket is in increasing order with
//     no ordering pass), the tokens present listed in increasing order, the
//     first bad token found (refused before anything is written);
//  2. dwte: a thread step per token present (dynamic schedule: GPT-2's
//     commonest token holds ~6 % of the positions), its rows added in the
//     promised order (position order in runs of 32, then the runs' sums)
//     over a block of channels held in registers, the inner loop over
//     channels vectorized; one rounding into each output; the next token's
//     rows and the next row prefetched (kernels/prefetch.hpp);
//  3. dwpe: a thread step per t, the B rows added in order alike;
//  4. overwritten: the rows of absent tokens set to 0.
// The sums' order depends on the positions alone: the same bits on every
// thread count. Why: the device kernels' thread per (token, channel) walks
// present → offsets → sorted → dout for every element; on 2 host cores
// (GPT-2's B 8, T 1024, C 768, fp32) the call took 17.9 ms, 3.7 % of a copy
// of its bytes.
#pragma once

#include <kernels/prefetch.hpp>
#include <kernels/tuning.hpp>
#include <kernels/update.hpp>
#include <llmk/types.hpp>
#include <ops/encoder_backward/kernels.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>

namespace llmk::op::encoder_backward {

inline constexpr index_t kHostChannels = 64;  // a block of channels in registers

// write(c, Σ_r row(r)[c]) for every channel c < C, the rows r ∈ [0, n)
// added in the promised order (llmk/encoder_backward.hpp): in runs of `run`
// rows, each run's sum in order, then the runs' sums in order (one run: the
// rows in order); a block of kHostChannels channels at a time, in registers.
// (Whole rows into a thread's row of floats in L1 instead, each row of dout
// streamed once, took 1.1-1.2x as long on 2 cores.)
template <class Row, class Write>
inline void sum_rows_in_order(const index_t n, const index_t C, const index_t run, const Row& row,
                              const Write& write) {
  for (index_t c0 = 0; c0 < C; c0 += kHostChannels) {
    const index_t width = std::min(kHostChannels, C - c0);
    float total[kHostChannels] = {}, part[kHostChannels];
    for (index_t r0 = 0; r0 < n; r0 += run) {
      std::fill(part, part + width, 0.0f);
      for (index_t r = r0; r < std::min(n, r0 + run); ++r) {
        const auto* x = row(r) + c0;
        // The next row whole while the first block of channels passes (the
        // rows lie where the positions put them; the later blocks then find
        // them in cache): Zipf tokens, whose common ones have hundreds of
        // rows, 4.1 -> 3.3 ms fp32 and 2.5 -> 1.6 bf16 (one thread, below).
        if (c0 == 0 && r + 1 < n)
          kernels::prefetch_lines(row(r + 1), std::size_t(C) * sizeof(*x), false);
        LLMK_SIMD
        for (index_t j = 0; j < width; ++j) part[j] += to_float(x[j]);
      }
      LLMK_SIMD
      for (index_t j = 0; j < width; ++j) total[j] += part[j];
    }
    for (index_t j = 0; j < width; ++j) write(c0 + j, total[j]);
  }
}

// Sorts the positions (step 1) into w's counts, offsets, sorted and present;
// returns what it found (every count known: no device wait is involved).
template <class ExecSpace, class Args>
kernels::EncoderFound host_sort_positions(const ExecSpace& exec, const Args& a,
                                          const kernels::EncoderSortSpace& w) {
  exec.fence();  // the tokens as the instance's earlier work left them
  const index_t V = index_t(a.dwte.extent(0)), M = index_t(a.tokens.extent(0));
  kernels::EncoderFound found;
  std::fill(w.counts, w.counts + V, 0);
  for (index_t i = 0; i < M; ++i) {
    const int t = a.tokens(i);
    if (t >= 0 && t < V)
      ++w.counts[t];
    else if (found.first_bad < 0)
      found.first_bad = i;
  }
  int sum = 0;
  for (index_t v = 0; v < V; ++v) {
    w.offsets[v] = w.cursor[v] = sum;
    sum += w.counts[v];
    if (w.counts[v] > 0) w.present[found.present++] = int(v);
  }
  w.offsets[V] = sum;
  for (index_t i = 0; i < M; ++i) {
    const int t = a.tokens(i);
    if (t >= 0 && t < V) w.sorted[w.cursor[t]++] = int(i);
  }
  return found;
}

// The next token's dwte row and its first row of dout, fetched while this
// token's are added: dwte's rows lie at the tokens' scattered places (GPT-2:
// 154 MB of them), and each row's first misses would otherwise wait on
// memory. One thread of a Zen 4 core, `llmk-perf encoder_backward --threads 1`
// (B 8, T 1024, uniform tokens): the call 6.7 -> 4.1 ms fp32 (22 -> 34 % of
// a copy), 4.5 -> 2.5 ms bf16; a token further ahead gained nothing more, nor
// did the next position's rows in dwpe's loop (which the hardware streams).
template <class Args>
LLMK_ALWAYS_INLINE void prefetch_token_rows(const Args& a, const kernels::EncoderSortSpace& w,
                                            const int t, const index_t C) {
  using DWte = typename decltype(a.dwte)::value_type;
  using Dout = typename decltype(a.dout)::value_type;
  kernels::prefetch_lines(&a.dwte(t, 0), std::size_t(C) * sizeof(DWte), true);
  kernels::prefetch_lines(&a.dout(w.sorted[w.offsets[t]], 0), std::size_t(C) * sizeof(Dout),
                          false);
}

// Steps 2-4, after host_sort_positions.
template <class ExecSpace, class Args>
void host_sums(const ExecSpace& exec, const Args& a, const kernels::EncoderSortSpace& w,
               const kernels::EncoderFound& found) {
  const index_t C = index_t(a.dwte.extent(1)), V = index_t(a.dwte.extent(0));
  const index_t B = a.B, T = a.T;
  using Dynamic = Kokkos::RangePolicy<ExecSpace, Kokkos::Schedule<Kokkos::Dynamic>>;
  Kokkos::parallel_for(
      "llmk::encoder_dwte_host", Dynamic(exec, 0, found.present), [=](const index_t k) {
        const int t = w.present[k];
        const int begin = w.offsets[t];
        if (k + 1 < found.present && C > 0) prefetch_token_rows(a, w, w.present[k + 1], C);
        sum_rows_in_order(
            w.offsets[t + 1] - begin, C, kernels::kEncoderRun,
            [&](index_t r) { return &a.dout(w.sorted[begin + r], 0); },
            [&](index_t c, float s) { kernels::update(a.dwte(t, c), s, a.overwrite_dwte); });
      });
  Kokkos::parallel_for(
      "llmk::encoder_dwpe_host", Range<ExecSpace>(exec, 0, T), [=](const index_t t) {
        sum_rows_in_order(
            B, C, B, [&](index_t b) { return &a.dout(b * T + t, 0); },
            [&](index_t c, float s) { kernels::update(a.dwpe(t, c), s, a.overwrite_dwpe); });
      });
  if (!a.overwrite_dwte) return;
  using DWte = typename decltype(a.dwte)::value_type;
  Kokkos::parallel_for(
      "llmk::encoder_dwte_absent_host", Range<ExecSpace>(exec, 0, V), [=](const index_t v) {
        if (w.counts[v] != 0) return;
        for (index_t c = 0; c < C; ++c) a.dwte(v, c) = DWte(0.0f);
      });
}

}  // namespace llmk::op::encoder_backward
