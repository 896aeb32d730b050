// A small product a thread computes in registers, for host loops that tile
// their work in scratch (the recompute attention's tiles on a host):
//
//   C(r, j) = [C(r, j) +] Σ_k A(r, k)·B(k, j),   k ∈ [lo_r, hi_r), increasing,
//
// for R rows r and NJ columns j, A(r, k) at A[r·sar + k·sak] (any of A's two
// orders), B's rows and C's rows contiguous. The R × NJ sums stay in
// registers over the whole k loop: per k, R values of A (broadcast) and NJ
// of B for R·NJ multiply-adds, where a row at a time (rank-1 updates of C in
// memory) loads and stores C every k. With NJ = 64 and R = 4 on AVX-512,
// 16 vector registers of sums. Each row's own k range lets causal sums stop
// exactly at their last term (no 0·NaN from a masked pair).
// Plain code, device-compilable (tests run the host tunings on Cuda), fast
// where the compiler vectorizes along j: hosts.
#pragma once

#include <kernels/host_vectors.hpp>
#include <kernels/tuning.hpp>
#include <llmk/types.hpp>

#include <type_traits>

namespace llmk::kernels {

// Rows of a block; with NJ = 64 the 4 × 64 sums take 16 of AVX-512's 32
// vector registers, the rest hold B's row and A's broadcasts.
inline constexpr int kProductRows = 4;

// Each row's range of k, [lo[r], hi[r]).
template <int R>
struct RowRanges {
  index_t lo[R], hi[R];
  RowRanges() = default;
  KOKKOS_INLINE_FUNCTION RowRanges(const index_t lo_all, const index_t hi_all) {
    for (int r = 0; r < R; ++r) lo[r] = lo_all, hi[r] = hi_all;
  }
};

// The k ranges of the rows [0, rows): the first k of any and the end of any
// ([first, last)), and [all_first, all_last) where every row's holds k
// (empty: all_first = all_last).
template <int R>
struct KSpan {
  index_t first, last, all_first, all_last;
  KOKKOS_INLINE_FUNCTION KSpan(const RowRanges<R>& k_range, const int rows)
      : first(k_range.lo[0]), last(k_range.hi[0]), all_first(k_range.lo[0]),
        all_last(k_range.hi[0]) {
    for (int r = 1; r < rows; ++r) {
      first = k_range.lo[r] < first ? k_range.lo[r] : first;
      last = k_range.hi[r] > last ? k_range.hi[r] : last;
      all_first = k_range.lo[r] > all_first ? k_range.lo[r] : all_first;
      all_last = k_range.hi[r] < all_last ? k_range.hi[r] : all_last;
    }
    if (all_last < all_first) all_last = all_first;
  }
  // step(k, every_row) over [first, last) in increasing k.
  template <class Step>
  KOKKOS_INLINE_FUNCTION void walk(const Step& step) const {
    for (index_t k = first; k < all_first; ++k) step(k, false);
    for (index_t k = all_first; k < all_last; ++k) step(k, true);
    for (index_t k = all_last > first ? all_last : first; k < last; ++k) step(k, false);
  }
};

// C's first `rows` rows (1 ≤ rows ≤ R) of NJ columns; accumulate: from C's
// values, else from 0.
template <int R, int NJ>
KOKKOS_INLINE_FUNCTION void product_rows(float* C, const index_t ldc, const float* A,
                                         const index_t sar, const index_t sak, const float* B,
                                         const index_t ldb, const RowRanges<R>& k_range,
                                         const int rows, const bool accumulate) {
  const KSpan<R> span(k_range, rows);
  const auto holds = [&](const int r, const index_t k, const bool every_row) {
    return r < rows && (every_row || (k >= k_range.lo[r] && k < k_range.hi[r]));
  };
#if LLMK_HOST_VECTORS
  if constexpr (NJ % detail::kLanes == 0) {
    using detail::Floats;
    constexpr int L = detail::kLanes, NV = NJ / L;
    Floats acc[R][NV];
    LLMK_UNROLL
    for (int r = 0; r < R; ++r) {
      LLMK_UNROLL
      for (int v = 0; v < NV; ++v)
        acc[r][v] = accumulate && r < rows ? detail::load_floats(C + r * ldc + L * v) : Floats{};
    }
    span.walk([&](const index_t k, const bool every_row) {
      Floats b[NV];
      LLMK_UNROLL
      for (int v = 0; v < NV; ++v) b[v] = detail::load_floats(B + k * ldb + L * v);
      LLMK_UNROLL
      for (int r = 0; r < R; ++r) {
        if (!holds(r, k, every_row)) continue;
        const Floats x = detail::broadcast(A[r * sar + k * sak]);
        LLMK_UNROLL
        for (int v = 0; v < NV; ++v) acc[r][v] += x * b[v];
      }
    });
    LLMK_UNROLL
    for (int r = 0; r < R; ++r) {
      if (r >= rows) continue;
      LLMK_UNROLL
      for (int v = 0; v < NV; ++v) detail::store_floats(C + r * ldc + L * v, acc[r][v]);
    }
    return;
  }
#endif
  // Devices (the host tunings run there in tests) and odd widths: plain sums.
  float acc[R][NJ];
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < NJ; ++j) acc[r][j] = accumulate && r < rows ? C[r * ldc + j] : 0.0f;
  span.walk([&](const index_t k, const bool every_row) {
    const float* const b = B + k * ldb;
    for (int r = 0; r < R; ++r) {
      if (!holds(r, k, every_row)) continue;
      const float x = A[r * sar + k * sak];
      for (int j = 0; j < NJ; ++j) acc[r][j] += x * b[j];
    }
  });
  for (int r = 0; r < rows; ++r)
    for (int j = 0; j < NJ; ++j) C[r * ldc + j] = acc[r][j];
}

// f(j0, width) over [0, n) in chunks of 64 columns, then 16, then 1
// (width: std::integral_constant<int, ...>, a product_rows NJ).
template <class F>
KOKKOS_INLINE_FUNCTION void for_column_chunks(const index_t n, const F& f) {
  index_t j = 0;
  for (; j + 64 <= n; j += 64) f(j, std::integral_constant<int, 64>{});
  for (; j + 16 <= n; j += 16) f(j, std::integral_constant<int, 16>{});
  for (; j < n; ++j) f(j, std::integral_constant<int, 1>{});
}

}  // namespace llmk::kernels
