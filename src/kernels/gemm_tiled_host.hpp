// The tiled GEMM's sub-tiles (kernels/gemm_tiled.hpp; the host's structure,
// a 1 × 1 grid): the micro-tile (4 × 24 floats: 12 AVX2 registers) sweeps
// the tile's many sub-tiles per chunk, so each chunk's products must be added
// somewhere that outlives the chunk:
//  - into D itself when D is float and the epilogue has nothing to apply (=
//    at the first chunk when overwriting, += after): no extra memory;
//  - otherwise into a float tile of sums in team scratch (bm × bn, after the
//    staged chunk; host scratch is ordinary memory, in cache as D's tile
//    was), and the last chunk's products go, with those sums, through the
//    epilogue into D: a bf16 D is rounded once, not once per chunk, and
//    GELU's factor (or α) multiplies the whole sum. No extra pass over D.
// Two more host paths (TiledTuning's exact_k and split_k):
//  - exact_k: a team stages and multiplies only the k of a chunk within K
//    and the sub-tiles that cover D (run-time bounds): at M = 64 dweight's
//    K = 64 filled half of a 128-deep chunk with zeros multiplied too.
//  - split_k: a product with fewer tiles than threads (dinp at M = 64 and
//    C = 768 is one tile) splits K into ranges of whole chunks; the team of
//    (range, tile) sums into a float partial tile in the call's workspace
//    (no epilogue), then a second pass (split_sum) adds the ranges'
//    partials in range order and applies the epilogue once (= or +=, one
//    rounding); a fused dbias goes through double partials likewise.
// Scratch: the staged chunk (gemm_tiled_staging.hpp), then, when needed, the
// sums as [bm/sm][bn/sn][thread][tm][tn] (a sub-tile's sums contiguous: the
// sweep reads them in order).
#pragma once

#include <kernels/gemm_tiled_args.hpp>

#include <type_traits>

namespace llmk::kernels {

template <class C>
struct SubTiles {
  using Args = TiledArgs<C>;
  using Member = typename C::Member;
  using TD = typename C::d_type;
  using StagedA = typename Args::StagedA;
  using StagedB = typename Args::StagedB;
  using Micro = MicroTile<C>;
  using Tuning = typename C::tuning;
  static constexpr int TM = C::TM, TN = C::TN, TX = C::TX, NT = C::NT, V = C::V;
  static constexpr int BM = C::BM, BN = C::BN, BK = C::BK, SM = C::SM, SN = C::SN;
  static_assert(NT == 1, "the host's team paths are for one thread per team");

  // Where a K chunk is: the first writes the running sums, the last
  // finishes them. exact_k also: its depth (fewer than BK at K's end), how
  // many A panels cover op(A)'s rows, and the team's partial tile when K is
  // split.
  struct Chunk {
    bool first, last;
    int depth = BK;
    int a_panels = BM / SM;
    float* partial = nullptr;
  };

  // A team's work over its K range (all of K, or one of split.count) and,
  // with exact_k, exact chunks: only the k within K and the sub-tiles that
  // cover D are staged and multiplied.
  KOKKOS_INLINE_FUNCTION static void team(const Args& g, const Member& team) {
    const typename Args::Place place = g.place_of(team.league_rank());
    const index_t batch = place.batch, tile = place.tile, range = place.range;
    const index_t m0 = place.m0, n0 = place.n0;
    const index_t k_begin = place.k_begin, k_end = place.k_end;
    const index_t tiles = g.tiles_m * g.tiles_n;
    const bool bias_team = C::fuse_bias && n0 == 0;
    const int level = Tuning::scratch_level;
    const typename C::Scratch scratch(team.team_scratch(level), g.scratch_floats());
    float* const buf = C::aligned(scratch.data());
    float* const partial =
        g.partial ? g.partial + ((range * g.batches() + batch) * tiles + tile) * (BM * BN)
                  : nullptr;
    const int a_panels = sub_tiles(g.rows - m0, SM, BM), b_panels = sub_tiles(g.cols - n0, SN, BN);

    double bsum[C::fuse_bias ? BM / SM : 1][C::bias_rows] = {};
    if (g.skips_tile(m0, n0)) return;
    if (k_begin == k_end) {  // a triangle emptied the range: sums of 0 (no chunk is read)
      compute(g, team, buf, batch, m0, n0, Chunk{true, true, 0, a_panels, partial}, false, bsum);
      return;
    }
    for (index_t k0 = k_begin; k0 < k_end; k0 += BK) {
      const int depth = Tuning::exact_k && k_end - k0 < BK ? int(k_end - k0) : BK;
      if (Tuning::exact_k && !(depth == BK && a_panels == BM / SM && b_panels == BN / SN)) {
        StagedA::stage_exact(g.a_source(batch, k_end), buf, k0, depth, m0, a_panels);
        StagedB::stage_exact(g.b_source(batch, k_end), buf, k0, depth, n0, b_panels);
      } else {  // (nothing to leave out: the compile-time loops are faster)
        stage(g, team, buf, batch, k0, k_end, m0, n0);
      }
      team.team_barrier();
      compute(g, team, buf, batch, m0, n0,
              Chunk{k0 == k_begin, k0 + BK >= k_end, depth, a_panels, partial}, bias_team, bsum);
      team.team_barrier();
    }
    if (bias_team) g.write_bias(team, m0, bsum, range);
  }

  // The whole chunk at k0 (zeros from the range's end k_end on): with
  // compile-time loops, bounds checked unless the chunk lies inside both
  // matrices and the range.
  KOKKOS_INLINE_FUNCTION static void stage(const Args& g, const Member& team, float* buf,
                                           const index_t batch, const index_t k0,
                                           const index_t k_end, const index_t m0,
                                           const index_t n0) {
    const bool inside = k0 + BK <= k_end && m0 + BM <= g.rows && n0 + BN <= g.cols;
    auto copy = [&](const int tid, auto inside_t) {
      constexpr bool in = decltype(inside_t)::value;
      StagedA::template stage<in>(g.a_source(batch, k_end), tid, k0, m0, buf);
      StagedB::template stage<in>(g.b_source(batch, k_end), tid, k0, n0, buf);
    };
    C::for_each_thread(team, [&](int ty, int tx) {
      if (inside) {
        copy(ty * TX + tx, std::true_type{});
      } else {
        copy(ty * TX + tx, std::false_type{});
      }
    });
  }

  // Sub-tiles of width `sub` that cover min(left, tile) elements.
  KOKKOS_INLINE_FUNCTION static int sub_tiles(const index_t left, const int sub, const int tile) {
    return left >= tile ? tile / sub : int((left + sub - 1) / sub);
  }

  template <class BiasSums>
  KOKKOS_INLINE_FUNCTION static void compute(const Args& g, const Member& team, float* buf,
                                             const index_t batch, const index_t m0,
                                             const index_t n0, const Chunk chunk,
                                             const bool bias_team, BiasSums& bsum) {
    const float* const as = buf;
    const float* const bs = buf + C::a_floats;
    C::for_each_thread(team, [&](int ty, int tx) {
      // A's panel (bk × sm) stays in L1 while B's panels stream past it,
      // and D (or the sums) is updated along its rows (sequential,
      // prefetcher-friendly). Sub-tiles wholly outside D are skipped
      // (their scratch is zeros).
      float* const sums = (chunk.partial ? chunk.partial : buf + C::a_floats + C::b_floats) +
                          (ty * TX + tx) * TM * TN;
      const int si_end = sub_tiles(g.rows - m0, SM, BM), sj_end = sub_tiles(g.cols - n0, SN, BN);
      for (int si = 0; si < si_end; ++si) {
        for (int sj = 0; sj < sj_end; ++sj) {
          float tile[TM][TN];
          Micro::chunk_tile(tile, as + si * C::a_panel + ty * TM, bs + sj * C::b_panel + tx * V,
                            chunk.depth);
          add_chunk(g, tile, batch, m0 + si * SM + ty * TM, n0 + sj * SN + tx * V,
                    sums + (si * (BN / SN) + sj) * NT * TM * TN, chunk);
        }
      }
      if constexpr (C::fuse_bias) {  // (exact_k: only the staged part of the chunk)
        if (bias_team) Args::sum_bias_rows(as, ty * TX + tx, bsum, chunk.depth, chunk.a_panels);
      }
    });
  }

  // A chunk's products of one micro-tile, `sums` its running sums in
  // scratch (sums_in_scratch()) or, when K is split, in the team's partial
  // tile (the epilogue is then split_sum's).
  KOKKOS_INLINE_FUNCTION static void add_chunk(const Args& g, float (&tile)[TM][TN],
                                               const index_t batch, const index_t r0,
                                               const index_t c0, float* const sums,
                                               const Chunk chunk) {
    if (chunk.partial) {
      Micro::accumulate(sums, tile, chunk.first);
    } else if (g.sums_in_d) {
      add_to_d(g, tile, batch, r0, c0, chunk.first && g.overwrite);
    } else if (!chunk.last) {
      Micro::accumulate(sums, tile, chunk.first);
    } else {
      if (!chunk.first) {
        LLMK_UNROLL for (int i = 0; i < TM; ++i)
          for (int j = 0; j < TN; ++j) tile[i][j] += sums[i * TN + j];
      }
      g.write_d(tile, batch, r0, c0);
    }
  }

  // sums_in_d(): D ⟵ one chunk's products (= when overwriting D at the
  // first chunk, += otherwise).
  KOKKOS_INLINE_FUNCTION static void add_to_d(const Args& g, const float (&tile)[TM][TN],
                                              const index_t batch, const index_t r0,
                                              const index_t c0, const bool store) {
    if constexpr (std::is_same_v<TD, float>) {
      TD* const d = g.d_of(batch);
      if (store) {
        g.for_each_in_d(d, tile, r0, c0, [](float& out, float v, index_t, index_t) { out = v; });
      } else {
        g.for_each_in_d(d, tile, r0, c0, [](float& out, float v, index_t, index_t) { out += v; });
      }
    }
  }

  // The second pass (split_k), one micro-tile of D per index (the tiles of
  // all products in turn): adds the ranges' partial sums in range order,
  // then the epilogue (write_d: on the whole sum, one rounding); dbias
  // likewise from its doubles.
  KOKKOS_INLINE_FUNCTION static void split_sum(const Args& g, const index_t i) {
    constexpr int per_tile = BM / SM * (BN / SN);
    const index_t tiles = g.tiles_m * g.tiles_n;
    const index_t t = i / per_tile, si = i % per_tile / (BN / SN), sj = i % (BN / SN);
    const index_t batch = C::batched ? t / tiles : 0, tile = C::batched ? t % tiles : t;
    const index_t r0 = tile / g.tiles_n * BM + si * SM, c0 = tile % g.tiles_n * BN + sj * SN;
    if (r0 >= g.rows || c0 >= g.cols || g.skips_element(r0, c0)) return;
    const float* sums = g.partial + t * (BM * BN) + (si * (BN / SN) + sj) * (TM * TN);
    float tile_sums[TM][TN];
    LLMK_UNROLL for (int a = 0; a < TM; ++a)
      for (int b = 0; b < TN; ++b) tile_sums[a][b] = sums[a * TN + b];
    for (index_t s = 1; s < g.split.count; ++s) {
      sums += tiles * g.batches() * (BM * BN);
      LLMK_UNROLL for (int a = 0; a < TM; ++a)
        for (int b = 0; b < TN; ++b) tile_sums[a][b] += sums[a * TN + b];
    }
    g.write_d(tile_sums, batch, r0, c0);
    if constexpr (C::fuse_bias) {
      if (g.bias == nullptr || c0 != 0) return;
      for (int a = 0; a < TM && r0 + a < g.rows; ++a) g.reduce_bias(r0 + a);
    }
  }
};

}  // namespace llmk::kernels
