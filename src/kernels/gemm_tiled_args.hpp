// The run-time side of the tiled GEMM (kernels/gemm_tiled.hpp): what its
// teams read (TiledArgs: the operands, sizes, split-K plan and workspace,
// epilogue), where a team works (place_of), and the writes into D and dbias
// that both of its structures share (the epilogue, then kernels::update).
#pragma once

#include <kernels/gemm_epilogue.hpp>
#include <kernels/gemm_tiled_config.hpp>
#include <kernels/gemm_tiled_micro.hpp>
#include <kernels/gemm_tiled_split.hpp>
#include <kernels/gemm_tiled_staging.hpp>
#include <kernels/update.hpp>

namespace llmk::kernels {

// Where an operand's matrix of product (o, i) of a batch is: o·outer + i·inner.
struct BatchStrides {
  index_t outer = 0, inner = 0;
};

template <class C>
struct TiledArgs {
  using TIn = typename C::in_type;
  using TD = typename C::d_type;
  using TBias = typename C::bias_type;
  using Member = typename C::Member;
  using StagedA = StagedOperand<C, GemmOperandRole::A>;
  using StagedB = StagedOperand<C, GemmOperandRole::B>;
  using Micro = MicroTile<C>;
  static constexpr int TM = C::TM, TN = C::TN, NT = C::NT, TX = C::TX;
  static constexpr int BM = C::BM, SM = C::SM;

  TD* d;
  const TIn* a;
  const TIn* b;
  typename C::epilogue_type epilogue;
  TBias* bias = nullptr;  // with_bias
  index_t ldd, lda, ldb;
  index_t rows, cols, depth;  // R, N, K
  index_t tiles_m, tiles_n;
  Triangle triangle = Triangle::none;  // the tiles and K ranges it leaves out (gemm_operand.hpp)
  // Batched forms only: the batch's inner count and number of products, and
  // each operand's strides.
  index_t inner = 1, batch_count = 1;
  BatchStrides d_batch, a_batch, b_batch;
  index_t ldw;  // register tiles' split-K: a partial sum's row stride (N rounded up to V)
  // split_k: K in split.count ranges of split.span; their partial sums:
  // on a host per (range, product, tile) a BM × BN float tile laid out as
  // the scratch sums; with register tiles per (range, product) an R × ldw
  // row-major matrix. Both: per (range, row) a double bias sum.
  SplitPlan split;
  float* partial = nullptr;
  double* bias_partial = nullptr;
  bool overwrite, overwrite_bias = false;
  // Whether A's and B's rows can be loaded in packs of V (register tiles).
  bool packed_a, packed_b;
  // Host: whether the running sums over K chunks live in D itself (float, an
  // epilogue with nothing to apply) rather than in the scratch tile of sums.
  // (A flag set by the constructor, not the epilogue's constexpr identity():
  // GCC 12 compiles the micro-kernel loop of the float TN product with a
  // reload from the stack each k when the sweep has the other branches
  // folded away.)
  bool sums_in_d;

  // The number of products (1 unless batched: then the code folds away).
  KOKKOS_INLINE_FUNCTION index_t batches() const {
    if constexpr (C::batched) {
      return batch_count;
    } else {
      return 1;
    }
  }
  KOKKOS_INLINE_FUNCTION index_t offset(const BatchStrides& s, const index_t batch) const {
    if constexpr (C::batched) {
      return batch / inner * s.outer + batch % inner * s.inner;
    } else {
      return 0;
    }
  }
  // The operands as a team stages them: zeros from k_end on (the end of
  // its K range: K, a split range's end, or where a triangle stops it).
  KOKKOS_INLINE_FUNCTION typename StagedA::Source a_source(const index_t batch,
                                                          const index_t k_end) const {
    return {a + offset(a_batch, batch), lda, rows, k_end, packed_a};
  }
  KOKKOS_INLINE_FUNCTION typename StagedB::Source b_source(const index_t batch,
                                                          const index_t k_end) const {
    return {b + offset(b_batch, batch), ldb, cols, k_end, packed_b};
  }
  KOKKOS_INLINE_FUNCTION TD* d_of(const index_t batch) const { return d + offset(d_batch, batch); }

  // Where team `league_rank` works: its product, its tile (m0, n0 its first
  // row and column of D) and its K range [k_begin, k_end) (all of K unless
  // split, or cut by a_upper / a_lower: then possibly empty, k_begin =
  // k_end, and the tile's sums are 0). A range's teams take the products in
  // turn, each product's tiles.
  struct Place {
    index_t batch, tile, range, m0, n0, k_begin, k_end;
  };
  KOKKOS_INLINE_FUNCTION Place place_of(const index_t league_rank) const {
    const index_t tiles = tiles_m * tiles_n, per_range = tiles * batches();
    const index_t t = league_rank % per_range, range = league_rank / per_range;
    const index_t batch = C::batched ? t / tiles : 0, tile = C::batched ? t % tiles : t;
    const index_t m0 = tile / tiles_n * BM;
    index_t k_begin = range * split.span;
    index_t k_end = depth - k_begin < split.span ? depth : k_begin + split.span;
    if (triangle == Triangle::a_upper && k_begin < m0) k_begin = m0 < k_end ? m0 : k_end;
    if (triangle == Triangle::a_lower && k_end > m0 + BM) k_end = m0 + BM > k_begin ? m0 + BM : k_begin;
    return {batch, tile, range, m0, tile % tiles_n * C::BN, k_begin, k_end};
  }

  // Whether d_lower leaves the tile at (m0, n0) out: it lies wholly above
  // D's diagonal (its first column is past its last row).
  KOKKOS_INLINE_FUNCTION bool skips_tile(const index_t m0, const index_t n0) const {
    return triangle == Triangle::d_lower && n0 >= m0 + BM;
  }
  // The same for the tile holding D(r, c).
  KOKKOS_INLINE_FUNCTION bool skips_element(const index_t r, const index_t c) const {
    return skips_tile(r / BM * BM, c / C::BN * C::BN);
  }

  KOKKOS_INLINE_FUNCTION bool sums_in_scratch() const {
    return !C::one_subtile && !sums_in_d && split.count == 1;
  }
  KOKKOS_INLINE_FUNCTION int scratch_floats() const {
    return C::tuning::stages * C::stage_floats + (sums_in_scratch() ? C::sum_floats : 0) +
           C::align;  // + room to align
  }

  // f(D(r, c), tile[i][j], r, c) for the micro-tile's elements at
  // r = r0 + i, c = c0 + col(j) that lie within D (d: the product's).
  template <class F>
  KOKKOS_INLINE_FUNCTION void for_each_in_d(TD* const d_product, const float (&tile)[TM][TN],
                                            const index_t r0, const index_t c0,
                                            const F& f) const {
    const bool inside = r0 + TM - 1 < rows && c0 + Micro::col(TN - 1) < cols;
    C::for_each_row([&](const int i) {
      const index_t r = r0 + i;
      TD* const row = d_product + r * ldd + c0;
      if (inside) {  // (no bounds checks: GCC vectorizes the row)
        for (int j = 0; j < TN; ++j) f(row[Micro::col(j)], tile[i][j], r, c0 + Micro::col(j));
      } else if (r < rows) {
        for (int j = 0; j < TN; ++j)
          if (c0 + Micro::col(j) < cols) f(row[Micro::col(j)], tile[i][j], r, c0 + Micro::col(j));
      }
    });
  }

  // The epilogue of one element: D(r, c) ⟵ epilogue(v), v its whole sum
  // over K (= or +=, one rounding).
  KOKKOS_INLINE_FUNCTION void finish(TD& out, const float v, const index_t batch,
                                     const index_t r, const index_t c) const {
    update(out, epilogue(v, GemmElement{batch, r, c}), overwrite);
  }

  KOKKOS_INLINE_FUNCTION void write_d(const float (&tile)[TM][TN], const index_t batch,
                                      const index_t r0, const index_t c0) const {
    // One thread a micro-tile (a host: its columns c0 .. c0 + TN - 1) and an
    // epilogue with a row form: a whole tile's rows through it.
    if constexpr (TX == 1 && has_row_epilogue<typename C::epilogue_type>::value) {
      if (r0 + TM <= rows && c0 + TN <= cols) {
        TD* const d = d_of(batch);
        for (int i = 0; i < TM; ++i) {
          float v[TN];
          for (int j = 0; j < TN; ++j) v[j] = tile[i][j];
          epilogue.row(v, TN, GemmElement{batch, r0 + i, c0});
          TD* const row = d + (r0 + i) * ldd + c0;
          for (int j = 0; j < TN; ++j) update(row[j], v[j], overwrite);
        }
        return;
      }
    }
    for_each_in_d(d_of(batch), tile, r0, c0,
                  [&](TD& out, float v, const index_t r, const index_t c) {
                    finish(out, v, batch, r, c);
                  });
  }

  // FuseBias: bsum[p][u] += Σ_k As(k, row p·SM + tid + u·NT) for this chunk,
  // a float sum over the chunk added to a double per row; `depth` k of the
  // first `panels` panels (all of them but on a host, exact_k).
  template <class BiasSums>
  KOKKOS_INLINE_FUNCTION static void sum_bias_rows(const float* as, const int tid,
                                                   BiasSums& bsum, const int depth = C::BK,
                                                   const int panels = BM / SM) {
    for (int p = 0; p < panels; ++p) {
      float s[C::bias_rows] = {};
      for (int k = 0; k < depth; ++k)
        for (int u = 0; u < C::bias_rows; ++u)
          if (tid + u * NT < SM) s[u] += as[p * C::a_panel + k * C::a_ld + tid + u * NT];
      for (int u = 0; u < C::bias_rows; ++u) bsum[p][u] += s[u];
    }
  }

  // dbias ⟵ the bias rows' sums; with K split (split_k), the range's
  // partial sums, which the second pass adds.
  template <class BiasSums>
  KOKKOS_INLINE_FUNCTION void write_bias(const Member& team, const index_t m0,
                                         const BiasSums& bsum, const index_t range) const {
    double* const part = bias_partial ? bias_partial + range * tiles_m * BM : nullptr;
    C::for_each_thread(team, [&](int ty, int tx) {
      const int tid = ty * TX + tx;
      for (int p = 0; p < BM / SM; ++p)
        for (int u = 0; u < C::bias_rows; ++u) {
          const index_t r = m0 + p * SM + tid + u * NT;
          if (tid + u * NT >= SM || r >= rows) continue;
          if (part) {
            part[r] = bsum[p][u];
          } else {
            update(bias[r], float(bsum[p][u]), overwrite_bias);
          }
        }
    });
  }

  // The second passes (split_k): dbias(r) ⟵ Σ over the ranges of row r's
  // double partial sums, in range order.
  KOKKOS_INLINE_FUNCTION void reduce_bias(const index_t r) const {
    double sum = 0;
    for (index_t s = 0; s < split.count; ++s) sum += bias_partial[s * tiles_m * BM + r];
    update(bias[r], float(sum), overwrite_bias);
  }
};

}  // namespace llmk::kernels
