// The encoder backward kernels (ops/encoder_backward/ has the operation):
//   dwte[v, :] ⟵ Σ_{positions i holding token v} dout[i, :]   (i = b·T + t)
//   dwpe[t, :] ⟵ Σ_b dout[b·T + t, :]
// Sums in float in a fixed order, one rounding into each output
// (kernels/update.hpp); floating-point atomics nowhere.
//
// dwte needs the positions grouped by token, in increasing order within a
// token (the order of its sum). A counting sort on the device, all in
// integers (exact, so the order of the integer atomics cannot show):
//  1. counts[v]: the positions holding v (integer atomics); a token outside
//     [0, V) is skipped and its first position kept (an atomic min);
//  2. offsets = the exclusive scan of counts (bucket v is
//     [offsets[v], offsets[v + 1]));
//  3. bucket: each position dropped into its token's bucket at a slot from an
//     atomic cursor (slots in any order);
//  4. sorted[offsets[v] + r] = p, r = the positions of the bucket below p:
//     the bucket in increasing order, whatever step 3's order (a bucket of n
//     positions costs n² comparisons: GPT-2's text has buckets of a few
//     hundred; all B·T positions of one token, 8192² = 6.7·10⁷, the worst);
//     the tokens present and the first slots of the long buckets' runs are
//     listed (in any order: each entry's sum is the same whoever lists it).
// The host then reads three counts (the first bad position, the tokens
// present, the runs): a bad token is refused here, before any output is
// written; the sums' launches are sized by the counts. A bucket is summed in
// runs of R = encoder_backward_run positions (llmk/encoder_backward.hpp), in
// position order within a run, then the runs' sums in order: a bucket of
// ≤ R positions by the thread of its (token, channel), a longer one's runs
// first, a thread per (run, channel), into `partials`. Then a thread per (t,
// channel) adds dwpe's B rows. Overwritten, the rows of absent tokens are set
// to 0 by a pass of their own.
// H200, GPT-2's B 8, T 1024, C 768, Zipf tokens (~525 positions hold the
// commonest), fp32, CUDA events around the call: a bucket summed by one
// thread a channel and the tokens checked by a reduction and a wait of their
// own, 0.156 ms; runs of 32 and the check inside the sort, 0.131; the sums'
// loads in batches (sum_in_order), 0.115 (llm.c's atomics 0.034). ncu's
// kernel times of that call (µs): the count, fill and order passes 3.8, 3.8,
// 14.8, the scan ~6, dwte 30.9 (3457 tokens × 768 threads: each walks
// present → offsets → sorted → dout), dwpe 11; the rest is the host's wait
// between the sort and the sums.
#pragma once

#include <kernels/static_for.hpp>
#include <kernels/tokens.hpp>
#include <kernels/update.hpp>
#include <llmk/encoder_backward.hpp>
#include <llmk/types.hpp>

namespace llmk::kernels {

template <class ExecSpace, class In, class DWte, class DWpe>
struct EncoderArgs {
  template <class T>
  using Matrix = Kokkos::View<T**, Kokkos::LayoutRight, typename ExecSpace::device_type,
                              Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Matrix<DWte> dwte;      // V × C
  Matrix<DWpe> dwpe;      // T × C
  Matrix<const In> dout;  // M × C, M = B·T
  Kokkos::View<const int*, Kokkos::LayoutRight, typename ExecSpace::device_type,
               Kokkos::MemoryTraits<Kokkos::Unmanaged>>
      tokens;  // M
  index_t B = 0, T = 0;
  bool overwrite_dwte = false, overwrite_dwpe = false;
  bool check_tokens = true;  // EncoderBackwardOptions::check_tokens
};

// The workspace of the sort and the runs' sums: encoder_sort_ints ints, then
// encoder_partial_floats floats.
struct EncoderSortSpace {
  int* counts;      // V: the positions holding each token
  int* offsets;     // V + 1: bucket v is [offsets[v], offsets[v + 1])
  int* cursor;      // V
  int* bucket;      // M: the positions by token, in any order within a bucket
  int* sorted;      // M: the same, in increasing order within each bucket
  int* present;     // M: the tokens present (any order)
  int* runs;        // M: the first slots of the long buckets' runs (any order)
  int* found;       // 3: the first bad position (M: none), the tokens present, the runs
  float* partials;  // encoder_partial_rows(M) × C: the long buckets' runs' sums
};

inline constexpr int kEncoderRun = encoder_backward_run;
// The lanes of a sum's launch when the host has not read the counts
// (check_tokens off): two waves of an H200's 132 × 2048 threads.
inline constexpr index_t kEncoderLanes = index_t(1) << 19;

// Σ_{q ∈ [begin, end)} value(q), added in order of q, with kEncoderBatch
// values loaded before they are added: a sum's loads are independent, its
// additions a chain. Written as a plain loop, each addition waited for its
// load (a bucket of 32 rows: 15 µs a kernel on the H200, ncu).
inline constexpr int kEncoderBatch = 8;
template <class Value>
KOKKOS_INLINE_FUNCTION float sum_in_order(const int begin, const int end, const Value& value) {
  float sum = 0;
  int q = begin;
  for (; q + kEncoderBatch <= end; q += kEncoderBatch) {
    float v[kEncoderBatch];
    static_for<kEncoderBatch>([&](const int u) { v[u] = value(q + u); });
    static_for<kEncoderBatch>([&](const int u) { sum += v[u]; });
  }
  for (; q < end; ++q) sum += value(q);
  return sum;
}

inline std::size_t encoder_sort_ints(index_t V, index_t M) {
  return std::size_t(3 * V + 1 + 4 * M + 3);
}

// The arrays in encoder_sort_ints(V, M) ints from `ints`.
inline EncoderSortSpace encoder_sort_space(int* ints, float* partials, index_t V, index_t M) {
  EncoderSortSpace w;
  w.counts = ints;
  w.offsets = w.counts + V;
  w.cursor = w.offsets + V + 1;
  w.bucket = w.cursor + V;
  w.sorted = w.bucket + M;
  w.present = w.sorted + M;
  w.runs = w.present + M;
  w.found = w.runs + M;
  w.partials = partials;
  return w;
}

// Bucket b (offsets o, n > R positions) keeps its runs' sums in rows
// 2·⌊o/R⌋ + j, j < ⌈n/R⌉: no list or scan of the runs is needed to find them,
// and the next long bucket (o' ≥ o + n) starts at 2·⌊o'/R⌋ ≥ 2·⌊o/R⌋ +
// 2·⌊n/R⌋ ≥ 2·⌊o/R⌋ + ⌈n/R⌉ (n > R), past b's. The last row is below
// 2·(M − n)/R + n/R < 2·M/R.
KOKKOS_INLINE_FUNCTION index_t encoder_partial_row(const int offset, const int slot) {
  return 2 * index_t(offset / kEncoderRun) + (slot - offset) / kEncoderRun;
}
inline index_t encoder_partial_rows(index_t M) { return 2 * ((M + kEncoderRun - 1) / kEncoderRun); }
inline std::size_t encoder_partial_floats(index_t M, index_t C) {
  return std::size_t(encoder_partial_rows(M) * C);
}

// What the sort found, read by the host (one wait for the instance), or
// not read (unknown(): the sums' launches then take kEncoderLanes lanes
// that walk the counts in w.found, encoder_dwte).
struct EncoderFound {
  index_t first_bad = -1;  // −1: every token in [0, V)
  index_t present = 0, runs = 0;
  static EncoderFound unknown() { return {-1, -1, -1}; }
  bool known() const { return present >= 0; }
};

// Sorts the positions (steps 1-4), writing the workspace alone, and returns
// what it found: with read_back, after a wait for the instance; without it
// (the caller vouches for the tokens), unknown(), nothing waited for.
template <class ExecSpace, class Args>
EncoderFound encoder_sort_positions(const ExecSpace& exec, const Args& a, const EncoderSortSpace& w,
                                    const bool read_back) {
  const index_t V = index_t(a.dwte.extent(0)), M = index_t(a.tokens.extent(0));
  const auto tokens = a.tokens;
  Kokkos::parallel_for(
      "llmk::encoder_clear_counts", Range<ExecSpace>(exec, 0, V + 1),
      KOKKOS_LAMBDA(const index_t v) {
        if (v < V) {
          w.counts[v] = 0;
          w.cursor[v] = 0;
        } else {
          w.found[0] = int(M);
          w.found[1] = w.found[2] = 0;
        }
      });
  Kokkos::parallel_for(
      "llmk::encoder_count_tokens", Range<ExecSpace>(exec, 0, M), KOKKOS_LAMBDA(const index_t i) {
        const int t = tokens(i);
        if (t < 0 || t >= V)
          Kokkos::atomic_fetch_min(&w.found[0], int(i));
        else
          Kokkos::atomic_fetch_add(&w.counts[t], 1);  // (atomic_increment: deprecated in 4.x)
      });
  Kokkos::parallel_scan(
      "llmk::encoder_offsets", Range<ExecSpace>(exec, 0, V + 1),
      KOKKOS_LAMBDA(const index_t v, int& sum, const bool final) {
        if (final) w.offsets[v] = sum;
        if (v < V) sum += w.counts[v];
      });
  Kokkos::parallel_for(
      "llmk::encoder_fill_buckets", Range<ExecSpace>(exec, 0, M), KOKKOS_LAMBDA(const index_t i) {
        const int t = tokens(i);
        if (t < 0 || t >= V) return;
        w.bucket[w.offsets[t] + Kokkos::atomic_fetch_add(&w.cursor[t], 1)] = int(i);
      });
  Kokkos::parallel_for(
      "llmk::encoder_order_buckets", Range<ExecSpace>(exec, 0, M), KOKKOS_LAMBDA(const index_t k) {
        if (k >= w.offsets[V]) return;  // slots of no bucket: there were bad tokens
        const int p = w.bucket[k], t = tokens(p);
        const int begin = w.offsets[t], end = w.offsets[t + 1];
        int below = 0, q = begin;  // in batches, as sum_in_order
        for (; q + kEncoderBatch <= end; q += kEncoderBatch)
          static_for<kEncoderBatch>([&](const int u) { below += w.bucket[q + u] < p; });
        for (; q < end; ++q) below += w.bucket[q] < p;
        w.sorted[begin + below] = p;
        if (below == 0) w.present[Kokkos::atomic_fetch_add(&w.found[1], 1)] = t;
        if (end - begin > kEncoderRun && below % kEncoderRun == 0)
          w.runs[Kokkos::atomic_fetch_add(&w.found[2], 1)] = begin + below;
      });
  if (!read_back) return EncoderFound::unknown();
  int found[3];
  Kokkos::deep_copy(exec, Kokkos::View<int*, Kokkos::HostSpace>(found, 3),
                    Kokkos::View<const int*, typename ExecSpace::memory_space>(w.found, 3));
  exec.fence();
  return {found[0] < M ? index_t(found[0]) : -1, found[1], found[2]};
}

// dwte's rows of the tokens present (`found` from encoder_sort_positions),
// and the absent ones' zeroed where dwte is overwritten.
template <class ExecSpace, class Args>
void encoder_dwte(const ExecSpace& exec, const Args& a, const EncoderSortSpace& w,
                  const EncoderFound& found) {
  const index_t C = index_t(a.dwte.extent(1));
  const index_t V = index_t(a.dwte.extent(0)), M = index_t(a.tokens.extent(0));
  // Counts not read back: at most min(M, V) tokens present, and fewer than
  // 2·M/R runs (a bucket of n > R positions has ⌈n/R⌉ < 2n/R of them), the
  // partials' rows. Then a fixed number of lanes walks the elements the
  // device's counts give (a lane per element where launches sized for the
  // bounds left most idle: H200, GPT-2's B 8, T 1024, bf16-fp32grad,
  // device time 0.108 -> 0.124 ms).
  const bool known = found.known();
  const index_t run_elems = (known ? found.runs : encoder_partial_rows(M)) * C;
  const index_t present_elems = (known ? found.present : (M < V ? M : V)) * C;
  const auto lanes_for = [known](const index_t elems) {
    return known || elems < kEncoderLanes ? elems : kEncoderLanes;
  };
  const index_t run_lanes = lanes_for(run_elems), present_lanes = lanes_for(present_elems);
  Kokkos::parallel_for(
      "llmk::encoder_dwte_runs", Range<ExecSpace>(exec, 0, run_lanes),
      KOKKOS_LAMBDA(const index_t lane) {
        const index_t elems = known ? run_elems : index_t(w.found[2]) * C;
        for (index_t i = lane; i < elems; i += run_lanes) {
          const index_t c = i % C;
          const int first = w.runs[i / C];
          const int t = a.tokens(w.sorted[first]);
          const int begin = w.offsets[t], bucket_end = w.offsets[t + 1];
          const int end = first + kEncoderRun < bucket_end ? first + kEncoderRun : bucket_end;
          const auto element = [&](const int q) { return to_float(a.dout(w.sorted[q], c)); };
          w.partials[encoder_partial_row(begin, first) * C + c] = sum_in_order(first, end, element);
        }
      });
  Kokkos::parallel_for(
      "llmk::encoder_dwte", Range<ExecSpace>(exec, 0, present_lanes),
      KOKKOS_LAMBDA(const index_t lane) {
        const index_t elems = known ? present_elems : index_t(w.found[1]) * C;
        for (index_t i = lane; i < elems; i += present_lanes) {
          const index_t c = i % C;
          const int t = w.present[i / C];
          const int begin = w.offsets[t], end = w.offsets[t + 1];
          float sum;
          if (end - begin <= kEncoderRun) {
            const auto element = [&](const int q) { return to_float(a.dout(w.sorted[q], c)); };
            sum = sum_in_order(begin, end, element);
          } else {
            const index_t row = encoder_partial_row(begin, begin);
            const int runs = (end - begin + kEncoderRun - 1) / kEncoderRun;
            sum = sum_in_order(0, runs, [&](const int j) { return w.partials[(row + j) * C + c]; });
          }
          update(a.dwte(t, c), sum, a.overwrite_dwte);
        }
      });
  if (!a.overwrite_dwte) return;
  using T = typename decltype(a.dwte)::value_type;
  Kokkos::parallel_for(
      "llmk::encoder_dwte_absent", Range<ExecSpace>(exec, 0, V * C),
      KOKKOS_LAMBDA(const index_t i) {
        const index_t v = i / C;
        if (w.counts[v] == 0) a.dwte(v, i % C) = T(0.0f);
      });
}

template <class ExecSpace, class Args>
void encoder_dwpe(const ExecSpace& exec, const Args& a) {
  const index_t T = a.T, B = a.B, C = index_t(a.dwpe.extent(1));
  Kokkos::parallel_for(
      "llmk::encoder_dwpe", Range<ExecSpace>(exec, 0, T * C), KOKKOS_LAMBDA(const index_t i) {
        const index_t t = i / C, c = i % C;
        const float sum =
            sum_in_order(0, int(B), [&](const int b) { return to_float(a.dout(b * T + t, c)); });
        update(a.dwpe(t, c), sum, a.overwrite_dwpe);
      });
}

}  // namespace llmk::kernels
