// The tiled GEMM's register tiles (kernels/gemm_tiled.hpp; the GPU's
// structure): the sub-tile is the whole tile, and each thread's micro-tile
// stays in registers over the team's K range; the epilogue runs once, where
// the micro-tile is written, or in split-K's second pass (split_reduce).
#pragma once

#include <kernels/gemm_tiled_args.hpp>

namespace llmk::kernels {

template <class C>
struct RegisterTiles {
  using Args = TiledArgs<C>;
  using Member = typename C::Member;
  using TD = typename C::d_type;
  using StagedA = typename Args::StagedA;
  using StagedB = typename Args::StagedB;
  using Micro = MicroTile<C>;
  static constexpr int TM = C::TM, TN = C::TN, TX = C::TX, V = C::V;
  static constexpr int BM = C::BM, SM = C::SM, BK = C::BK;
  static constexpr int stages = C::tuning::stages;
  static constexpr bool async_a = C::async_a, async_b = C::async_b;
  static_assert(C::one_subtile, "register tiles: one sub-tile per tile");
  static_assert(stages == 1 || stages == 2, "one or two scratch buffers");

  // A thread's share of a chunk, in registers.
  struct Fetched {
    typename StagedA::Packs a;
    typename StagedB::Packs b;
  };

  // The team's tile over its K range (all of K, or one of split.count).
  // Chunk c's scratch buffer is buf + (c % stages) · stage_floats; with two,
  // a thread loads its share of chunk c + 1 into registers before the FMAs
  // of chunk c and stores it after them: one barrier per chunk, the loads'
  // latency behind the FMAs.
  KOKKOS_INLINE_FUNCTION static void team(const Args& g, const Member& team) {
    const typename Args::Place place = g.place_of(team.league_rank());
    const index_t batch = place.batch, range = place.range, m0 = place.m0, n0 = place.n0;
    const index_t k_begin = place.k_begin, k_end = place.k_end;
    if (g.skips_tile(m0, n0)) return;  // (the whole team: no barrier is left waiting)
    const typename StagedA::Source a_src = g.a_source(batch, k_end);
    const typename StagedB::Source b_src = g.b_source(batch, k_end);
    const bool bias_team = C::fuse_bias && n0 == 0;  // sees every op(A) element of its rows once
    const int level = C::tuning::scratch_level;  // (a copy: team_scratch takes a reference)
    const typename C::Scratch scratch(team.team_scratch(level), g.scratch_floats());
    float* const buf = C::aligned(scratch.data());

    float acc[TM][TN] = {};  // the thread's sums over its K range
    double bsum[C::fuse_bias ? BM / SM : 1][C::bias_rows] = {};  // the thread's bias rows
    // Chunk c + 1 goes into the other buffer while chunk c is multiplied:
    // through registers (A's share loaded before the first half of the k and
    // stored after it, B's likewise around the second half) or, for the
    // operands async_a / async_b name, copied by AsyncCopy; a thread waits
    // for its own copies before the barrier that ends the chunk.
    Fetched next;
    C::for_each_thread(team, [&](int ty, int tx) {
      const int tid = ty * TX + tx;
      if constexpr (async_a) {
        StagedA::copy_async(a_src, tid, k_begin, m0, buf);
      } else {
        StagedA::fetch(next.a, a_src, tid, k_begin, m0);
        StagedA::store(next.a, tid, buf);
      }
      if constexpr (async_b) {
        StagedB::copy_async(b_src, tid, k_begin, n0, buf);
      } else {
        StagedB::fetch(next.b, b_src, tid, k_begin, n0);
        StagedB::store(next.b, tid, buf);
      }
    });
    if constexpr (async_a || async_b) AsyncCopy::wait_all();
    team.team_barrier();
    index_t c = 0;
    for (index_t k0 = k_begin; k0 < k_end; k0 += BK, ++c) {
      const float* const cur = buf + (c % stages) * C::stage_floats;
      float* const other = buf + ((c + 1) % stages) * C::stage_floats;
      const bool more = k0 + BK < k_end;
      C::for_each_thread(team, [&](int ty, int tx) {
        const int tid = ty * TX + tx;
        const float* const a = cur + ty * TM;
        const float* const b = cur + C::a_floats + tx * V;
        constexpr int half = BK / 2;
        if (stages == 2 && more) {
          if constexpr (async_a) {
            StagedA::copy_async(a_src, tid, k0 + BK, m0, other);
          } else {
            StagedA::fetch(next.a, a_src, tid, k0 + BK, m0);
          }
          if constexpr (async_b) StagedB::copy_async(b_src, tid, k0 + BK, n0, other);
        }
        Micro::micro_kernel(acc, a, b, half);
        if (stages == 2 && more) {
          if constexpr (!async_a) StagedA::store(next.a, tid, other);
          if constexpr (!async_b) StagedB::fetch(next.b, b_src, tid, k0 + BK, n0);
        }
        Micro::micro_kernel(acc, a + half * C::a_ld, b + half * C::b_ld, half);
        if constexpr (C::fuse_bias) {
          if (bias_team) Args::sum_bias_rows(cur, tid, bsum);
        }
        if constexpr (!async_b) {
          if (stages == 2 && more) StagedB::store(next.b, tid, other);
        }
      });
      if constexpr (async_a || async_b) AsyncCopy::wait_all();
      team.team_barrier();
      if (stages == 1 && more) {
        C::for_each_thread(team, [&](int ty, int tx) {
          const int tid = ty * TX + tx;
          StagedA::fetch(next.a, a_src, tid, k0 + BK, m0);
          StagedB::fetch(next.b, b_src, tid, k0 + BK, n0);
          StagedA::store(next.a, tid, other);
          StagedB::store(next.b, tid, other);
        });
        team.team_barrier();
      }
    }
    finish_team(g, team, acc, bsum, batch, range, m0, n0, bias_team);
  }

  // The micro-tiles' sums into D (or the range's partials) and the bias
  // rows' sums into dbias (or theirs).
  template <class BiasSums>
  KOKKOS_INLINE_FUNCTION static void finish_team(const Args& g, const Member& team,
                                                 const float (&acc)[TM][TN],
                                                 const BiasSums& bsum, const index_t batch,
                                                 const index_t range, const index_t m0,
                                                 const index_t n0, const bool bias_team) {
    C::for_each_thread(team, [&](int ty, int tx) {
      float sums[TM][TN];
      Micro::to_tile(acc, sums);
      if (g.split.count > 1) {
        write_partial(g, sums, batch, range, m0 + ty * TM, n0 + tx * V);
      } else {
        g.write_d(sums, batch, m0 + ty * TM, n0 + tx * V);
      }
    });
    if (bias_team) g.write_bias(team, m0, bsum, range);
  }

  // K split: the micro-tile's sums into the range's partial matrix of its
  // product (no epilogue: split_reduce's), V columns at once.
  KOKKOS_INLINE_FUNCTION static void write_partial(const Args& g, const float (&tile)[TM][TN],
                                                   const index_t batch, const index_t range,
                                                   const index_t r0, const index_t c0) {
    float* const part = g.partial + (range * g.batches() + batch) * g.rows * g.ldw;
    C::for_each_row([&](const int i) {
      if (r0 + i >= g.rows) return;
      for (int j = 0; j < TN; j += V)
        if (c0 + Micro::col(j) < g.cols)
          C::store_floats(part + (r0 + i) * g.ldw + c0 + Micro::col(j), &tile[i][j]);
    });
  }

  // The second pass (split_k), V columns of a row of D per index (the rows
  // of all products in turn): adds the ranges' partial sums in range order,
  // then the epilogue (on the whole sum, = or +=, one rounding); dbias
  // likewise from its double partials, by the index of the row's first
  // columns.
  KOKKOS_INLINE_FUNCTION static void split_reduce(const Args& g, const index_t i) {
    const index_t row = i / (g.ldw / V), c = i % (g.ldw / V) * V;  // row of all products
    const index_t batch = C::batched ? row / g.rows : 0, r = C::batched ? row % g.rows : row;
    if (g.skips_element(r, c)) return;  // (its partials were never written; c: V columns of one tile)
    const float* sums = g.partial + row * g.ldw + c;
    float v[V];
    C::load_floats(v, sums);
    for (index_t s = 1; s < g.split.count; ++s) {
      float more[V];
      C::load_floats(more, sums + s * g.batches() * g.rows * g.ldw);
      for (int u = 0; u < V; ++u) v[u] += more[u];
    }
    TD* const d = g.d_of(batch);
    for (int u = 0; u < V && c + u < g.cols; ++u)
      g.finish(d[r * g.ldd + c + u], v[u], batch, r, c + u);
    if constexpr (C::fuse_bias) {
      if (g.bias == nullptr || c != 0) return;
      g.reduce_bias(r);
    }
  }
};

}  // namespace llmk::kernels
