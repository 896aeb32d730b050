// The recompute attention backward's kernels (flash-attention's backward;
// ops/attention_backward_recompute/ has the operation,
// llmk/attention_backward.hpp the formulas). No T × T array: the
// probabilities are recomputed a tile at a time from q, k and the forward's
// per-row log-sum-exp. Per (b, h), α = 1/√HS, over the causal part u ≤ t:
//   P[t, u]  = exp(α q_t·k_u − lse[t])
//   D[t]     = dout_h[t] · out_h[t]            (= Σ_u P[t, u]·dP[t, u])
//   dP[t, u] = dout_h[t] · v_u
//   dS[t, u] = P[t, u]·(dP[t, u] − D[t])
//   dq[t] = α Σ_{u ≤ t} dS[t, u]·k_u,   dk[u] = α Σ_{t ≥ u} dS[t, u]·q_t,
//   dv[u] =   Σ_{t ≥ u} P[t, u]·dout_h[t]
// Three kernels, no float atomics (deterministic: every sum is one thread's
// loop in a fixed order):
//  - attention_flash_row_dots: D, a thread per row (b, h, t), into the
//    workspace (B·NH·T floats);
//  - FlashDkDv: a team per block of keys of one (b, h) walks the query blocks
//    at or after it (the causal ones), stages each with its lse and D in team
//    scratch, recomputes the tile's P and dS there, and adds the tile's terms
//    to the block's dk and dv accumulators (team scratch, each element one
//    thread's);
//  - FlashDq: a team per block of queries walks the key blocks at or before
//    it, recomputes P and dS the same way and accumulates dq.
// Masked pairs (u > t) are neither computed nor summed: each sum runs over
// exactly the causal terms, in increasing order of the other index, so a
// result depends on exactly the inputs it mathematically does (a NaN reaches
// what the reference's causal sums carry it to, no more).
// Tiles and team shape: FlashAttentionTuning (kernels/attention_tuning.hpp).
// On hosts (channels_inner) the tile products are register blocks
// (kernels/block_product.hpp): GPT-2 124M's attention backward at B 8, T 256
// took 586 ms on 16 Xeon cores with the earlier pair-at-a-time scores and
// row-at-a-time (rank-1, through memory) accumulators.
#pragma once

#include <kernels/attention_tuning.hpp>
#include <kernels/block_product.hpp>
#include <kernels/fast_math.hpp>
#include <kernels/tuning.hpp>
#include <kernels/update.hpp>
#include <llmk/compat.hpp>
#include <llmk/types.hpp>

#include <cstddef>
#include <cstdint>

namespace llmk::kernels {

// One call's arguments as raw row-major pointers (llm.c's layout): row
// (b, t) of qkv and dqkv holds q, k, v side by side (3C), head h of each at
// h·HS; dout and out (B·T) × C; lse (B·NH·T) float, row (b, h, t) at
// (b·NH + h)·T + t.
template <class TIn, class TD>
struct FlashAttentionArgs {
  TD* dqkv = nullptr;
  const TIn* dout = nullptr;
  const TIn* qkv = nullptr;
  const TIn* out = nullptr;
  const float* lse = nullptr;
  index_t B = 0, T = 0, C = 0, NH = 1;
  float alpha = 1.0f;     // 1/√HS (attention_scale)
  bool overwrite = true;  // dqkv = (else +=)

  index_t HS() const { return C / NH; }
  // Sequences [b0, b0 + count): every array's part of them.
  FlashAttentionArgs sequences(const index_t b0, const index_t count) const {
    FlashAttentionArgs a = *this;
    a.dqkv += b0 * T * 3 * C;
    a.qkv += b0 * T * 3 * C;
    a.dout += b0 * T * C;
    a.out += b0 * T * C;
    a.lse += b0 * NH * T;
    a.B = count;
    return a;
  }
};

// D[(b·NH + h)·T + t] = dout_h[t] · out_h[t], a thread per row, in order over
// the channels.
template <class ExecSpace, class TIn, class TD>
void attention_flash_row_dots(const ExecSpace& exec, const FlashAttentionArgs<TIn, TD>& a,
                              float* const D) {
  const index_t T = a.T, C = a.C, NH = a.NH, HS = a.HS();
  const TIn* const dout = a.dout;
  const TIn* const out = a.out;
  Kokkos::parallel_for(
      "llmk::attention_flash_row_dots", Range<ExecSpace>(exec, 0, a.B * NH * T),
      KOKKOS_LAMBDA(const index_t r) {
        const index_t t = r % T, h = r / T % NH, b = r / T / NH;
        const index_t at = (b * T + t) * C + h * HS;
        float s = 0.0f;
        for (index_t d = 0; d < HS; ++d) s += to_float(dout[at + d]) * to_float(out[at + d]);
        D[r] = s;
      });
}

// The tiles of one kernel in team scratch: the `owned` block's rows (keys for
// FlashDkDv, queries for FlashDq) and the `streamed` block's, each row HS
// floats at a stride of ld (HS rounded up to odd: a GPU warp reading one
// channel of consecutive rows hits distinct banks), P and dS of
// owned × streamed, and `acc_tiles` accumulator tiles of the owned rows.
//
// channels_inner (hosts): rows of a multiple of 16 floats (64-byte vectors
// along the channels), and the key block's k and v also transposed, HS rows
// of ldt keys (vectors along the keys for the score products).
struct FlashTiles {
  int owned = 1, streamed = 1;
  index_t hs = 1, ld = 1;
  index_t ldt = 0;  // keys a transposed row holds; 0 without them
  int acc_tiles = 1;
  int level = 0;  // the scratch level they fit in

  FlashTiles() = default;
  FlashTiles(int owned_, int streamed_, index_t HS, int acc_tiles_, bool channels_inner)
      : owned(owned_), streamed(streamed_), hs(HS),
        ld(channels_inner ? (HS + 15) / 16 * 16 : HS | 1), acc_tiles(acc_tiles_) {
    const index_t keys = owned > streamed ? owned : streamed;
    ldt = channels_inner ? (keys + 15) / 16 * 16 : 0;
  }

  // Floats: owned rows ×2 (+ acc), streamed rows ×2, P and dS, lse and D of
  // the query block (whichever it is: the larger of the two), k and v
  // transposed.
  KOKKOS_INLINE_FUNCTION std::size_t floats() const {
    const std::size_t o = std::size_t(owned), s = std::size_t(streamed);
    return (2 + std::size_t(acc_tiles)) * o * std::size_t(ld) + 2 * s * std::size_t(ld) +
           2 * o * s + 2 * (o > s ? o : s) + 2 * std::size_t(hs) * std::size_t(ldt);
  }
  std::size_t bytes() const { return floats() * sizeof(float); }
};

// The tiles a kernel of this tuning uses for heads of HS channels: the
// tuning's blocks, halved (the streamed one first) until they fit its
// scratch budget; where even one row of each does not (a head of thousands
// of channels), the budget's scratch level is given up for level 1 (on a
// GPU, global memory).
template <class Tuning>
FlashTiles flash_tiles(int owned, int streamed, index_t HS, int acc_tiles) {
  const auto tiles = [&](int o, int s) {
    return FlashTiles(o, s, HS, acc_tiles, Tuning::channels_inner);
  };
  FlashTiles t = tiles(owned, streamed);
  while (t.bytes() > Tuning::scratch_bytes && (t.owned > 1 || t.streamed > 1)) {
    if (t.streamed > 1) t = tiles(t.owned, (t.streamed + 1) / 2);
    else t = tiles((t.owned + 1) / 2, t.streamed);
    if (t.streamed > t.owned) t = tiles(t.owned, t.owned);
  }
  t.level = t.bytes() > Tuning::scratch_bytes ? 1 : Tuning::scratch_level;
  return t;
}

// What both kernels share: the layout of their scratch, loading rows into
// it, and a tile's P and dS.
template <class ExecSpace, class TIn, class TD, class Tuning_>
struct FlashCommon {
  using Tuning = Tuning_;
  using Policy = Kokkos::TeamPolicy<ExecSpace, Kokkos::IndexType<index_t>>;
  using Member = typename Policy::member_type;
  using Scratch = Kokkos::View<float*, typename ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  FlashAttentionArgs<TIn, TD> a;
  const float* D = nullptr;  // attention_flash_row_dots
  FlashTiles tiles;
  index_t HS = 0;
  index_t owned_blocks = 0;  // per (b, h)
  index_t work = 0;          // B·NH·owned_blocks teams' worth

  FlashCommon(const FlashAttentionArgs<TIn, TD>& args, const float* D_, int owned, int streamed,
              int acc_tiles)
      : a(args), D(D_), tiles(flash_tiles<Tuning>(owned, streamed, args.HS(), acc_tiles)),
        HS(args.HS()) {
    owned_blocks = (a.T + tiles.owned - 1) / tiles.owned;
    work = a.B * a.NH * owned_blocks;
  }

  // A team per work item (Kokkos 3 counts a league in int: teams beyond it
  // take work items in turn), its tiles in scratch.
  template <class Kernel>
  void launch(const ExecSpace& exec, const char* label, const Kernel& kernel) const {
    if (work == 0) return;
    const index_t league = work < index_t(INT32_MAX) ? work : index_t(INT32_MAX);
    Policy policy(exec, league, Tuning::team_size, 1);
    policy = policy.set_scratch_size(tiles.level,
                                     Kokkos::PerTeam(Scratch::shmem_size(tiles.floats())));
    Kokkos::parallel_for(label, policy, kernel);
  }

  // The team's tiles, carved from its scratch in this order.
  struct Tiles {
    float* owned0;    // owned × ld (k, or q)
    float* owned1;    // owned × ld (v, or dout_h)
    float* acc;       // acc_tiles × owned × ld
    float* streamed0; // streamed × ld (q, or k)
    float* streamed1; // streamed × ld (dout_h, or v)
    float* P;         // rows of the query block × columns of the key block
    float* dS;
    float* lse;       // the query block's
    float* D;
    float* kT;        // channels_inner: HS × ldt, the key block's k transposed
    float* vT;        //                 and its v
  };

  KOKKOS_INLINE_FUNCTION Tiles carve(const Member& team) const {
    const Scratch s(team.team_scratch(tiles.level), tiles.floats());
    float* p = s.data();
    const std::size_t o = std::size_t(tiles.owned) * std::size_t(tiles.ld),
                      st = std::size_t(tiles.streamed) * std::size_t(tiles.ld),
                      ps = std::size_t(tiles.owned) * std::size_t(tiles.streamed),
                      rows = std::size_t(tiles.owned > tiles.streamed ? tiles.owned : tiles.streamed);
    Tiles t;
    t.owned0 = p, p += o;
    t.owned1 = p, p += o;
    t.acc = p, p += std::size_t(tiles.acc_tiles) * o;
    t.streamed0 = p, p += st;
    t.streamed1 = p, p += st;
    t.P = p, p += ps;
    t.dS = p, p += ps;
    t.lse = p, p += rows;
    t.D = p, p += rows;
    const std::size_t transposed = std::size_t(tiles.hs) * std::size_t(tiles.ldt);
    t.kT = p, p += transposed;
    t.vT = p;
    return t;
  }

  // Rows [t0, t0 + n) of head h of sequence b from `src` (row stride ld_src,
  // the head at h·HS of a row) as float into `dst` (stride tiles.ld).
  KOKKOS_INLINE_FUNCTION void load_rows(const Member& team, float* dst, const TIn* src,
                                        const index_t ld_src, const index_t b, const index_t t0,
                                        const index_t n) const {
    const index_t ld = tiles.ld, hs = HS, T = a.T;
    if (Tuning::channels_inner) {  // a row a thread, no division per element
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n), [&](const index_t i) {
        const TIn* const row = src + (b * T + t0 + i) * ld_src;
        LLMK_SIMD
        for (index_t d = 0; d < hs; ++d) dst[i * ld + d] = to_float(row[d]);
      });
      return;
    }
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n * hs), [&](const index_t e) {
      const index_t i = e / hs, d = e % hs;
      dst[i * ld + d] = to_float(src[(b * T + t0 + i) * ld_src + d]);
    });
  }

  // channels_inner: the staged key rows k and v [0, n) transposed into
  // t.kT and t.vT (channel d's row holds the n keys' values).
  KOKKOS_INLINE_FUNCTION void transpose_keys(const Member& team, const Tiles& t, const float* k,
                                             const float* v, const index_t n) const {
    const index_t ld = tiles.ld, ldt = tiles.ldt, hs = HS;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, hs), [&](const index_t d) {
      for (index_t j = 0; j < n; ++j) {
        t.kT[d * ldt + j] = k[j * ld + d];
        t.vT[d * ldt + j] = v[j * ld + d];
      }
    });
  }

  // The query rows [q0, q0 + n) of (b, h): q and dout_h into `q`, `g`, their
  // lse and D.
  KOKKOS_INLINE_FUNCTION void load_queries(const Member& team, const Tiles& t, float* q,
                                           float* g, const index_t b, const index_t h,
                                           const index_t q0, const index_t n) const {
    const index_t C = a.C;
    load_rows(team, q, a.qkv + h * HS, 3 * C, b, q0, n);
    load_rows(team, g, a.dout + h * HS, C, b, q0, n);
    const index_t row0 = (b * a.NH + h) * a.T + q0;
    const float* const lse = a.lse;
    const float* const Drow = D;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n), [&](const index_t i) {
      t.lse[i] = lse[row0 + i];
      t.D[i] = Drow[row0 + i];
    });
  }

  // The key rows [k0, k0 + n) of (b, h): k and v into `k`, `v`.
  KOKKOS_INLINE_FUNCTION void load_keys(const Member& team, float* k, float* v, const index_t b,
                                        const index_t h, const index_t k0, const index_t n) const {
    const index_t C = a.C;
    load_rows(team, k, a.qkv + C + h * HS, 3 * C, b, k0, n);
    load_rows(team, v, a.qkv + 2 * C + h * HS, 3 * C, b, k0, n);
  }

  // P and dS of queries [q0, q0 + nq) × keys [k0, k0 + nk), row-major with
  // nk columns, from the staged q, dout_h (stride ld), k, v, lse and D; 0 at
  // the masked pairs (not computed).
  KOKKOS_INLINE_FUNCTION void scores(const Member& team, const Tiles& t, const float* q,
                                     const float* g, const float* k, const float* v,
                                     const index_t q0, const index_t nq, const index_t k0,
                                     const index_t nk) const {
    if (Tuning::channels_inner)
      scores_by_pairs(team, t, q, g, k, v, q0, nq, k0, nk);
    else
      scores_by_micro_tiles(team, t, q, g, k, v, q0, nq, k0, nk);
  }

  // P[i, j] and dS[i, j] of a causal pair from its sums s = q_i·k_j and
  // dp = dout_h[i]·v_j; 0 at a masked pair.
  KOKKOS_INLINE_FUNCTION void store_pair(const Tiles& t, const index_t i, const index_t j,
                                         const index_t nk, const bool causal, const float s,
                                         const float dp) const {
    const float p = causal ? fast_exp_nonpositive(a.alpha * s - t.lse[i]) : 0.0f;
    t.P[i * nk + j] = p;
    t.dS[i * nk + j] = causal ? p * (dp - t.D[i]) : 0.0f;
  }

  // Hosts: the tile's sums S = q·kᵀ into P and dP = dout_h·vᵀ into dS, a
  // register block of queries × keys at a time over the channels
  // (product_rows, with the transposed keys t.kT and t.vT), then per query
  // row P and dS from them in one vectorized loop. The masked pairs' sums
  // are computed and then replaced by 0 (selected, not multiplied: a NaN in
  // a masked pair's k or v goes nowhere).
  KOKKOS_INLINE_FUNCTION void scores_by_pairs(const Member& team, const Tiles& t, const float* q,
                                              const float* g, const float*, const float*,
                                              const index_t q0, const index_t nq,
                                              const index_t k0, const index_t nk) const {
    const index_t ld = tiles.ld, ldt = tiles.ldt, hs = HS;
    constexpr int R = kProductRows;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, (nq + R - 1) / R), [&](const index_t rb) {
      const index_t i0 = rb * R;
      const int rows = nq - i0 < R ? int(nq - i0) : R;
      const RowRanges<R> all(0, hs);
      for_column_chunks(nk, [&](const index_t j0, auto width) {
        constexpr int NJ = decltype(width)::value;
        product_rows<R, NJ>(t.P + i0 * nk + j0, nk, q + i0 * ld, ld, 1, t.kT + j0, ldt, all,
                            rows, false);
        product_rows<R, NJ>(t.dS + i0 * nk + j0, nk, g + i0 * ld, ld, 1, t.vT + j0, ldt, all,
                            rows, false);
      });
      const float alpha = a.alpha;
      for (int r = 0; r < rows; ++r) {
        const index_t i = i0 + r;
        const float lse = t.lse[i], D = t.D[i];
        float* const P = t.P + i * nk;
        float* const dS = t.dS + i * nk;
        const index_t causal_end = q0 + i - k0 + 1;  // keys j < this are causal
        LLMK_SIMD
        for (index_t j = 0; j < nk; ++j) {
          const bool causal = j < causal_end;
          const float p = causal ? fast_exp_nonpositive(alpha * P[j] - lse) : 0.0f;
          P[j] = p;
          dS[j] = causal ? p * (dS[j] - D) : 0.0f;
        }
      }
    });
  }

  // GPUs: a thread per micro-tile of RI queries × RJ keys (score_rows ×
  // score_cols), the queries ib + a·IB and keys jb + b·JB (consecutive
  // threads on consecutive keys: rows ld apart, distinct banks; one query
  // row, a broadcast): per channel 2(RI + RJ) loads for 2·RI·RJ
  // multiply-adds, where a thread per pair makes 4 for 2. Rows past the
  // tile read its last row and are not stored. The sums run over the
  // channels in order, as scores_by_pairs' without simd.
  KOKKOS_INLINE_FUNCTION void scores_by_micro_tiles(const Member& team, const Tiles& t,
                                                    const float* q, const float* g,
                                                    const float* k, const float* v,
                                                    const index_t q0, const index_t nq,
                                                    const index_t k0, const index_t nk) const {
    constexpr int RI = Tuning::score_rows, RJ = Tuning::score_cols;
    const index_t ld = tiles.ld, hs = HS;
    const index_t IB = (nq + RI - 1) / RI, JB = (nk + RJ - 1) / RJ;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, IB * JB), [&](const index_t e) {
      const index_t ib = e / JB, jb = e % JB;
      const float* qi[RI];
      const float* gi[RI];
      const float* kj[RJ];
      const float* vj[RJ];
      for (int x = 0; x < RI; ++x) {
        const index_t i = ib + x * IB < nq ? ib + x * IB : nq - 1;
        qi[x] = q + i * ld, gi[x] = g + i * ld;
      }
      for (int y = 0; y < RJ; ++y) {
        const index_t j = jb + y * JB < nk ? jb + y * JB : nk - 1;
        kj[y] = k + j * ld, vj[y] = v + j * ld;
      }
      float s[RI][RJ], dp[RI][RJ];
      for (int x = 0; x < RI; ++x)
        for (int y = 0; y < RJ; ++y) s[x][y] = dp[x][y] = 0.0f;
      for (index_t d = 0; d < hs; ++d) {
        float qd[RI], gd[RI], kd[RJ], vd[RJ];
        for (int x = 0; x < RI; ++x) qd[x] = qi[x][d], gd[x] = gi[x][d];
        for (int y = 0; y < RJ; ++y) kd[y] = kj[y][d], vd[y] = vj[y][d];
        for (int x = 0; x < RI; ++x)
          for (int y = 0; y < RJ; ++y) {
            s[x][y] += qd[x] * kd[y];
            dp[x][y] += gd[x] * vd[y];
          }
      }
      for (int x = 0; x < RI; ++x)
        for (int y = 0; y < RJ; ++y) {
          const index_t i = ib + x * IB, j = jb + y * JB;
          if (i < nq && j < nk) store_pair(t, i, j, nk, k0 + j <= q0 + i, s[x][y], dp[x][y]);
        }
    });
  }

  // Rows [t0, t0 + n) of the accumulator `acc` × scale into part `part`
  // (0 q, 1 k, 2 v) of head h of sequence b of dqkv, = or +=.
  KOKKOS_INLINE_FUNCTION void write_rows(const Member& team, const float* acc, const index_t part,
                                         const float scale, const index_t b, const index_t h,
                                         const index_t t0, const index_t n) const {
    const index_t ld = tiles.ld, hs = HS, T = a.T, C = a.C;
    TD* const dst = a.dqkv + part * C + h * HS;
    const bool overwrite = a.overwrite;
    if (Tuning::channels_inner) {  // a row a thread, no division per element
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n), [&](const index_t i) {
        TD* const row = dst + (b * T + t0 + i) * 3 * C;
        LLMK_SIMD
        for (index_t d = 0; d < hs; ++d) update(row[d], scale * acc[i * ld + d], overwrite);
      });
      return;
    }
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n * hs), [&](const index_t e) {
      const index_t i = e / hs, d = e % hs;
      update(dst[(b * T + t0 + i) * 3 * C + d], scale * acc[i * ld + d], overwrite);
    });
  }

  // acc[i] += Σ_j W[i, j]·x[j] for the queries [q0, q0 + nq) and keys
  // [k0, k0 + nk) of a tile, each query's sum over its causal keys
  // j ≤ q0 + i − k0 alone, in increasing j: W the tile's weights (nq × nk,
  // row-major), x the key block's staged rows, acc the queries' (rows at a
  // stride of tiles.ld). FlashDq's dq += dS·k; the forward's out += P·v.
  // Hosts: register blocks of queries × channels (product_rows). GPUs: a
  // thread per micro-tile of RI queries × RD channels (acc_rows ×
  // acc_cols), laid out as add_key_terms' (per key RI + RD loads for RI·RD
  // multiply-adds).
  KOKKOS_INLINE_FUNCTION void add_causal_products(const Member& team, float* acc, const float* W,
                                                  const float* x, const index_t q0,
                                                  const index_t nq, const index_t k0,
                                                  const index_t nk) const {
    const index_t ld = tiles.ld, hs = HS;
    if (Tuning::channels_inner) {
      constexpr int R = kProductRows;
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, (nq + R - 1) / R), [&](const index_t ib) {
        const index_t i0 = ib * R;
        const int rows = nq - i0 < R ? int(nq - i0) : R;
        RowRanges<R> causal;  // query i0 + r: the keys j ≤ q0 + i0 + r − k0
        for (int r = 0; r < R; ++r) {
          const index_t end = q0 + i0 + r - k0 + 1;
          causal.lo[r] = 0;
          causal.hi[r] = end < nk ? (end > 0 ? end : 0) : nk;
        }
        for_column_chunks(hs, [&](const index_t d0, auto width) {
          constexpr int NJ = decltype(width)::value;
          product_rows<R, NJ>(acc + i0 * ld + d0, ld, W + i0 * nk, nk, 1, x + d0, ld, causal, rows,
                              true);
        });
      });
      return;
    }
    constexpr int RI = Tuning::acc_rows, RD = Tuning::acc_cols;
    const index_t IB = (nq + RI - 1) / RI, DB = (hs + RD - 1) / RD;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, IB * DB), [&](const index_t e) {
      const index_t ib = e / DB, db = e % DB;
      index_t i[RI], d[RD], end[RI];
      bool live[RI][RD];
      float s[RI][RD];
      index_t stop = 0;
      for (int r = 0; r < RI; ++r) {
        i[r] = ib + r * IB < nq ? ib + r * IB : nq - 1;
        end[r] = q0 + i[r] - k0 + 1 < nk ? q0 + i[r] - k0 + 1 : nk;
        stop = end[r] > stop ? end[r] : stop;
      }
      for (int c = 0; c < RD; ++c) d[c] = db + c * DB < hs ? db + c * DB : hs - 1;
      for (int r = 0; r < RI; ++r)
        for (int c = 0; c < RD; ++c) {
          live[r][c] = ib + r * IB < nq && db + c * DB < hs;  // as add_key_terms'
          s[r][c] = live[r][c] ? acc[i[r] * ld + d[c]] : 0.0f;
        }
      for (index_t j = 0; j < stop; ++j) {
        float xd[RD];
        for (int c = 0; c < RD; ++c) xd[c] = x[j * ld + d[c]];
        for (int r = 0; r < RI; ++r) {
          if (j >= end[r]) continue;
          const float w = W[i[r] * nk + j];
          for (int c = 0; c < RD; ++c) s[r][c] += w * xd[c];
        }
      }
      for (int r = 0; r < RI; ++r)
        for (int c = 0; c < RD; ++c)
          if (live[r][c]) acc[i[r] * ld + d[c]] = s[r][c];
    });
  }

  KOKKOS_INLINE_FUNCTION void zero(const Member& team, float* acc, const index_t floats) const {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, floats),
                         [&](const index_t e) { acc[e] = 0.0f; });
  }

};

// dk and dv: a team per block of keys [k0, k0 + nk) of one (b, h), over the
// query blocks that hold a query ≥ k0 (the first block's among them).
template <class ExecSpace, class TIn, class TD, class Tuning_ = FlashAttentionTuning<ExecSpace>>
struct FlashDkDv : FlashCommon<ExecSpace, TIn, TD, Tuning_> {
  using Base = FlashCommon<ExecSpace, TIn, TD, Tuning_>;
  using typename Base::Member;
  using typename Base::Tuning;
  using Base::a;
  using Base::tiles;
  using Base::HS;
  using Base::work;

  FlashDkDv(const FlashAttentionArgs<TIn, TD>& args, const float* D)
      : Base(args, D, Tuning_::dkdv_keys, Tuning_::dkdv_queries, 2) {}

  void run(const ExecSpace& exec) const { this->launch(exec, "llmk::attention_flash_dkdv", *this); }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    const typename Base::Tiles t = this->carve(team);
    const index_t T = a.T, ld = tiles.ld, hs = HS, league = team.league_size();
    const index_t bq = tiles.streamed;
    for (index_t w = team.league_rank(); w < work; w += league) {
      // Key block 0 (the most query blocks) first.
      const index_t kb = w % this->owned_blocks, bh = w / this->owned_blocks;
      const index_t b = bh / a.NH, h = bh % a.NH;
      const index_t k0 = kb * tiles.owned;
      const index_t nk = T - k0 < tiles.owned ? T - k0 : tiles.owned;
      float* const dk = t.acc;
      float* const dv = t.acc + index_t(tiles.owned) * ld;
      this->load_keys(team, t.owned0, t.owned1, b, h, k0, nk);
      this->zero(team, t.acc, 2 * index_t(tiles.owned) * ld);
      team.team_barrier();
      if (Tuning::channels_inner) {
        this->transpose_keys(team, t, t.owned0, t.owned1, nk);
        team.team_barrier();
      }
      for (index_t q0 = k0 / bq * bq; q0 < T; q0 += bq) {
        const index_t nq = T - q0 < bq ? T - q0 : bq;
        this->load_queries(team, t, t.streamed0, t.streamed1, b, h, q0, nq);
        team.team_barrier();
        this->scores(team, t, t.streamed0, t.streamed1, t.owned0, t.owned1, q0, nq, k0, nk);
        team.team_barrier();
        // dv[j] += Σ_i P[i, j]·dout_h[i], dk[j] += Σ_i dS[i, j]·q[i] over the
        // causal queries i ≥ k0 + j − q0, in increasing i.
        const float* const q = t.streamed0;
        const float* const g = t.streamed1;
        if (Tuning::channels_inner) {  // hosts: register blocks of keys × channels
          constexpr int R = kProductRows;
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, (nk + R - 1) / R),
                               [&](const index_t jb) {
            const index_t j0 = jb * R;
            const int rows = nk - j0 < R ? int(nk - j0) : R;
            RowRanges<R> causal;  // key j0 + r: the queries i ≥ k0 + j0 + r − q0
            for (int r = 0; r < R; ++r) {
              const index_t first = k0 + j0 + r - q0;
              causal.lo[r] = first > 0 ? first : 0;
              causal.hi[r] = nq;
            }
            for_column_chunks(hs, [&](const index_t d0, auto width) {
              constexpr int NJ = decltype(width)::value;
              product_rows<R, NJ>(dv + j0 * ld + d0, ld, t.P + j0, 1, nk, g + d0, ld, causal,
                                  rows, true);
              product_rows<R, NJ>(dk + j0 * ld + d0, ld, t.dS + j0, 1, nk, q + d0, ld, causal,
                                  rows, true);
            });
          });
        } else {
          add_key_terms(team, t, dk, dv, q, g, q0, nq, k0, nk);
        }
        team.team_barrier();
      }
      this->write_rows(team, dk, 1, a.alpha, b, h, k0, nk);
      this->write_rows(team, dv, 2, 1.0f, b, h, k0, nk);
      team.team_barrier();  // the accumulators read before the next block's zeros
    }
  }

  // GPUs: dv[j] += Σ_i P[i, j]·dout_h[i], dk[j] += Σ_i dS[i, j]·q[i] by a
  // thread per micro-tile of RJ keys × RD channels (acc_rows × acc_cols):
  // keys jb + y·JB, channels db + c·DB (consecutive threads on consecutive
  // channels: the rows' reads coalesce in banks, P and dS broadcast); per
  // query 2(RJ + RD) loads for 2·RJ·RD multiply-adds. Each key's sum over
  // its causal queries i ≥ k0 + j − q0 in increasing i, from its stored
  // value, as in the host loops.
  KOKKOS_INLINE_FUNCTION void add_key_terms(const Member& team, const typename Base::Tiles& t,
                                            float* dk, float* dv, const float* q, const float* g,
                                            const index_t q0, const index_t nq, const index_t k0,
                                            const index_t nk) const {
    constexpr int RJ = Tuning::acc_rows, RD = Tuning::acc_cols;
    const index_t ld = tiles.ld, hs = HS;
    const index_t JB = (nk + RJ - 1) / RJ, DB = (hs + RD - 1) / RD;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, JB * DB), [&](const index_t e) {
      const index_t jb = e / DB, db = e % DB;
      index_t j[RJ], d[RD], first[RJ];
      bool live[RJ][RD];
      float sv[RJ][RD], sk[RJ][RD];
      index_t start = nq;
      for (int y = 0; y < RJ; ++y) {
        j[y] = jb + y * JB < nk ? jb + y * JB : nk - 1;
        first[y] = k0 + j[y] - q0 > 0 ? k0 + j[y] - q0 : 0;
        start = first[y] < start ? first[y] : start;
      }
      for (int c = 0; c < RD; ++c) d[c] = db + c * DB < hs ? db + c * DB : hs - 1;
      for (int y = 0; y < RJ; ++y)
        for (int c = 0; c < RD; ++c) {
          // A clamped slot (a key or channel past the tile) is another
          // thread's element: not read (racecheck flagged the read against
          // its owner's write), summed from 0 and never written back.
          live[y][c] = jb + y * JB < nk && db + c * DB < hs;
          sv[y][c] = live[y][c] ? dv[j[y] * ld + d[c]] : 0.0f;
          sk[y][c] = live[y][c] ? dk[j[y] * ld + d[c]] : 0.0f;
        }
      for (index_t i = start; i < nq; ++i) {
        float gd[RD], qd[RD];
        for (int c = 0; c < RD; ++c) gd[c] = g[i * ld + d[c]], qd[c] = q[i * ld + d[c]];
        for (int y = 0; y < RJ; ++y) {
          if (i < first[y]) continue;
          const float p = t.P[i * nk + j[y]], ds = t.dS[i * nk + j[y]];
          for (int c = 0; c < RD; ++c) {
            sv[y][c] += p * gd[c];
            sk[y][c] += ds * qd[c];
          }
        }
      }
      for (int y = 0; y < RJ; ++y)
        for (int c = 0; c < RD; ++c)
          if (live[y][c]) {
            dv[j[y] * ld + d[c]] = sv[y][c];
            dk[j[y] * ld + d[c]] = sk[y][c];
          }
    });
  }
};

// dq: a team per block of queries [q0, q0 + nq) of one (b, h), over the key
// blocks that hold a key ≤ q0 + nq − 1.
template <class ExecSpace, class TIn, class TD, class Tuning_ = FlashAttentionTuning<ExecSpace>>
struct FlashDq : FlashCommon<ExecSpace, TIn, TD, Tuning_> {
  using Base = FlashCommon<ExecSpace, TIn, TD, Tuning_>;
  using typename Base::Member;
  using typename Base::Tuning;
  using Base::a;
  using Base::tiles;
  using Base::HS;
  using Base::work;

  FlashDq(const FlashAttentionArgs<TIn, TD>& args, const float* D)
      : Base(args, D, Tuning_::dq_queries, Tuning_::dq_keys, 1) {}

  void run(const ExecSpace& exec) const { this->launch(exec, "llmk::attention_flash_dq", *this); }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    const typename Base::Tiles t = this->carve(team);
    const index_t T = a.T, ld = tiles.ld, hs = HS, league = team.league_size();
    const index_t bk = tiles.streamed;
    for (index_t w = team.league_rank(); w < work; w += league) {
      // The last query block (the most key blocks) first.
      const index_t qb = this->owned_blocks - 1 - w % this->owned_blocks;
      const index_t bh = w / this->owned_blocks;
      const index_t b = bh / a.NH, h = bh % a.NH;
      const index_t q0 = qb * tiles.owned;
      const index_t nq = T - q0 < tiles.owned ? T - q0 : tiles.owned;
      float* const dq = t.acc;
      this->load_queries(team, t, t.owned0, t.owned1, b, h, q0, nq);
      this->zero(team, dq, index_t(tiles.owned) * ld);
      team.team_barrier();
      for (index_t k0 = 0; k0 < q0 + nq; k0 += bk) {
        const index_t nk = T - k0 < bk ? T - k0 : bk;
        this->load_keys(team, t.streamed0, t.streamed1, b, h, k0, nk);
        team.team_barrier();
        if (Tuning::channels_inner) {
          this->transpose_keys(team, t, t.streamed0, t.streamed1, nk);
          team.team_barrier();
        }
        this->scores(team, t, t.owned0, t.owned1, t.streamed0, t.streamed1, q0, nq, k0, nk);
        team.team_barrier();
        // dq[i] += Σ_j dS[i, j]·k[j] over the causal keys.
        this->add_causal_products(team, dq, t.dS, t.streamed0, q0, nq, k0, nk);
        team.team_barrier();
      }
      this->write_rows(team, dq, 0, a.alpha, b, h, q0, nq);
      team.team_barrier();
    }
  }
};

// The whole backward after D: dk and dv, then dq (the order is free: they
// write disjoint parts of dqkv). Tuning: the space's, or a test's
// (tests/test_attention_flash_tiles.cpp runs others on every space).
template <class ExecSpace, class TIn, class TD, class Tuning = FlashAttentionTuning<ExecSpace>>
void attention_flash_backward(const ExecSpace& exec, const FlashAttentionArgs<TIn, TD>& a,
                              const float* const D) {
  FlashDkDv<ExecSpace, TIn, TD, Tuning>(a, D).run(exec);
  FlashDq<ExecSpace, TIn, TD, Tuning>(a, D).run(exec);
}

}  // namespace llmk::kernels
