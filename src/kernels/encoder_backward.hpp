// The encoder backward kernels (ops/encoder_backward/ has the operation):
//   dwte[v, :] ⟵ Σ_{positions i holding token v} dout[i, :]   (i = b·T + t)
//   dwpe[t, :] ⟵ Σ_b dout[b·T + t, :]
// Sums in float in a fixed order, one rounding into each output
// (kernels/update.hpp); floating-point atomics nowhere.
//
// dwte needs the positions grouped by token, in increasing order within a
// token (the order of its sum). A counting sort on the device, all in
// integers (exact, so the order of the integer atomics cannot show):
//  1. counts[v]: the positions holding v (integer atomics);
//  2. offsets = the exclusive scan of counts (bucket v is
//     [offsets[v], offsets[v + 1]));
//  3. bucket: each position dropped into its token's bucket at a slot from an
//     atomic cursor (slots in any order);
//  4. sorted[offsets[v] + r] = p, r = the positions of the bucket below p:
//     the bucket in increasing order, whatever step 3's order (a bucket of n
//     positions costs n² comparisons: GPT-2's text has buckets of a few
//     hundred; all B·T positions of one token, 8192² = 6.7·10⁷, the worst);
// then a thread per (sorted slot, channel) whose slot starts a bucket adds
// the bucket's rows in order (coalesced along the channels), and a thread per
// (t, channel) dwpe's B rows. Overwritten, the rows of absent tokens are set
// to 0 by a pass of their own.
#pragma once

#include <kernels/update.hpp>
#include <llmk/types.hpp>

namespace llmk::kernels {

template <class ExecSpace, class In, class DWte, class DWpe>
struct EncoderArgs {
  template <class T>
  using Matrix = Kokkos::View<T**, Kokkos::LayoutRight, typename ExecSpace::device_type,
                              Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Matrix<DWte> dwte;       // V × C
  Matrix<DWpe> dwpe;       // T × C
  Matrix<const In> dout;   // M × C, M = B·T
  Kokkos::View<const int*, Kokkos::LayoutRight, typename ExecSpace::device_type,
               Kokkos::MemoryTraits<Kokkos::Unmanaged>>
      tokens;  // M
  index_t B = 0, T = 0;
  bool overwrite_dwte = false, overwrite_dwpe = false;
};

// The workspace of the sort: V + 1 + 2·V + 2·M ints.
struct EncoderSortSpace {
  int* counts;   // V
  int* offsets;  // V + 1
  int* cursor;   // V
  int* bucket;   // M
  int* sorted;   // M
};

inline std::size_t encoder_sort_ints(index_t V, index_t M) {
  return std::size_t(3 * V + 1 + 2 * M);
}

// The first position holding a token outside [0, V), or −1 (a min reduction:
// the same position whatever the order; the host waits for it).
template <class ExecSpace, class Tokens>
index_t first_bad_token(const ExecSpace& exec, const Tokens& tokens, const index_t V) {
  const index_t M = index_t(tokens.extent(0));
  index_t first = M;
  Kokkos::parallel_reduce(
      "llmk::encoder_check_tokens", Range<ExecSpace>(exec, 0, M),
      KOKKOS_LAMBDA(const index_t i, index_t& f) {
        const int t = tokens(i);
        if ((t < 0 || t >= V) && i < f) f = i;
      },
      Kokkos::Min<index_t>(first));
  exec.fence();  // (Kokkos 3 may leave a reduction into a host scalar pending)
  return first < M ? first : -1;
}

template <class ExecSpace, class Args>
void encoder_sort_positions(const ExecSpace& exec, const Args& a, const EncoderSortSpace& w) {
  const index_t V = index_t(a.dwte.extent(0)), M = index_t(a.tokens.extent(0));
  const auto tokens = a.tokens;
  Kokkos::parallel_for(
      "llmk::encoder_clear_counts", Range<ExecSpace>(exec, 0, V), KOKKOS_LAMBDA(const index_t v) {
        w.counts[v] = 0;
        w.cursor[v] = 0;
      });
  Kokkos::parallel_for(
      "llmk::encoder_count_tokens", Range<ExecSpace>(exec, 0, M),
      KOKKOS_LAMBDA(const index_t i) { Kokkos::atomic_increment(&w.counts[tokens(i)]); });
  Kokkos::parallel_scan(
      "llmk::encoder_offsets", Range<ExecSpace>(exec, 0, V + 1),
      KOKKOS_LAMBDA(const index_t v, int& sum, const bool final) {
        if (final) w.offsets[v] = sum;
        if (v < V) sum += w.counts[v];
      });
  Kokkos::parallel_for(
      "llmk::encoder_fill_buckets", Range<ExecSpace>(exec, 0, M), KOKKOS_LAMBDA(const index_t i) {
        const int t = tokens(i);
        w.bucket[w.offsets[t] + Kokkos::atomic_fetch_add(&w.cursor[t], 1)] = int(i);
      });
  Kokkos::parallel_for(
      "llmk::encoder_order_buckets", Range<ExecSpace>(exec, 0, M), KOKKOS_LAMBDA(const index_t k) {
        const int p = w.bucket[k], t = tokens(p);
        const int begin = w.offsets[t], end = w.offsets[t + 1];
        int below = 0;
        for (int q = begin; q < end; ++q) below += w.bucket[q] < p;
        w.sorted[begin + below] = p;
      });
}

template <class ExecSpace, class Args>
void encoder_dwte(const ExecSpace& exec, const Args& a, const EncoderSortSpace& w) {
  const index_t M = index_t(a.tokens.extent(0)), C = index_t(a.dwte.extent(1));
  Kokkos::parallel_for(
      "llmk::encoder_dwte", Range<ExecSpace>(exec, 0, M * C), KOKKOS_LAMBDA(const index_t i) {
        const index_t k = i / C, c = i % C;
        const int t = a.tokens(w.sorted[k]);
        const int begin = w.offsets[t];
        if (k != begin) return;  // not the first slot of its token's bucket
        const int end = w.offsets[t + 1];
        float sum = 0;
        for (int q = begin; q < end; ++q) sum += to_float(a.dout(w.sorted[q], c));
        update(a.dwte(t, c), sum, a.overwrite_dwte);
      });
  if (!a.overwrite_dwte) return;
  const index_t V = index_t(a.dwte.extent(0));
  using T = typename decltype(a.dwte)::value_type;
  Kokkos::parallel_for(
      "llmk::encoder_dwte_absent", Range<ExecSpace>(exec, 0, V * C), KOKKOS_LAMBDA(const index_t i) {
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
        float sum = 0;
        for (index_t b = 0; b < B; ++b) sum += to_float(a.dout(b * T + t, c));
        update(a.dwpe(t, c), sum, a.overwrite_dwpe);
      });
}

}  // namespace llmk::kernels
