// Implementation "flash": flash-attention's forward on team scratch, on
// every space. A team per block of queries of one (b, h) stages the queries,
// then walks the key blocks at or before them (kernels/attention_flash.hpp's
// FlashCommon: the backward's tiles, loads and causal products), per block:
//   S = q·kᵀ                       the logits' dots (a register block of
//                                  queries × keys a thread on hosts, from
//                                  the keys transposed; a micro-tile of
//                                  pairs a thread on GPUs)
//   m' = max(m, α S), P = exp(α S − m'), l = l·exp(m − m') + Σ P,
//   acc = acc·exp(m − m') + P·v    a query row a thread, then the causal
//                                  products (add_causal_products)
// and at the end out = acc / l, lse = m + log l. Masked pairs are neither
// exponentiated nor summed: each row's sums run over its causal keys in
// increasing order (deterministic; a NaN reaches exactly what it causally
// touches). No workspace.
#pragma once

#include <kernels/attention_flash.hpp>
#include <kernels/fast_math.hpp>
#include <kernels/update.hpp>
#include <llmk/compat.hpp>
#include <ops/attention_forward/problem.hpp>

#include <limits>

namespace llmk::op::attention_forward {

template <class ExecSpace, class TIn, class TOut,
          class Tuning_ = kernels::FlashAttentionTuning<ExecSpace>>
struct FlashForward : kernels::FlashCommon<ExecSpace, TIn, TOut, Tuning_> {
  using Base = kernels::FlashCommon<ExecSpace, TIn, TOut, Tuning_>;
  using typename Base::Member;
  using typename Base::Tuning;
  using Base::a;
  using Base::tiles;
  using Base::HS;
  using Base::work;

  TOut* out;
  float* lse;
  bool overwrite;

  explicit FlashForward(const Args<TIn, TOut>& f)
      : Base(f.common(), nullptr, Tuning_::dq_queries, Tuning_::dq_keys, 1), out(f.out),
        lse(f.lse), overwrite(f.overwrite) {}

  void run(const ExecSpace& exec) const {
    this->launch(exec, "llmk::attention_forward_flash", *this);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    const typename Base::Tiles t = this->carve(team);
    const index_t T = a.T, C = a.C, ld = tiles.ld, league = team.league_size();
    const index_t bk = tiles.streamed;
    // t.lse holds each query's running maximum m, t.D its running sum l.
    float* const most = t.lse;
    float* const sum = t.D;
    for (index_t w = team.league_rank(); w < work; w += league) {
      // The last query block (the most key blocks) first.
      const index_t qb = this->owned_blocks - 1 - w % this->owned_blocks;
      const index_t bh = w / this->owned_blocks;
      const index_t b = bh / a.NH, h = bh % a.NH;
      const index_t q0 = qb * tiles.owned;
      const index_t nq = T - q0 < tiles.owned ? T - q0 : tiles.owned;
      this->load_rows(team, t.owned0, a.qkv + h * HS, 3 * C, b, q0, nq);
      this->zero(team, t.acc, index_t(tiles.owned) * ld);
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nq), [&](const index_t i) {
        most[i] = -std::numeric_limits<float>::infinity();
        sum[i] = 0.0f;
      });
      team.team_barrier();
      for (index_t k0 = 0; k0 < q0 + nq; k0 += bk) {
        const index_t nk = T - k0 < bk ? T - k0 : bk;
        this->load_keys(team, t.streamed0, t.streamed1, b, h, k0, nk);
        team.team_barrier();
        if (Tuning::channels_inner) {  // k transposed for the logits (v is read as it is)
          const float* const k = t.streamed0;
          const index_t ldt = tiles.ldt, hs = HS;
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, hs), [&](const index_t d) {
            for (index_t j = 0; j < nk; ++j) t.kT[d * ldt + j] = k[j * ld + d];
          });
          team.team_barrier();
        }
        logits(team, t, t.owned0, t.streamed0, nq, nk);
        team.team_barrier();
        softmax_step(team, t, q0, nq, k0, nk);
        team.team_barrier();
        this->add_causal_products(team, t.acc, t.P, t.streamed1, q0, nq, k0, nk);
        team.team_barrier();
      }
      write(team, t, b, h, q0, nq);
      team.team_barrier();
    }
  }

  // t.P (nq × nk) = q·kᵀ over the channels, in order, for every pair (the
  // masked ones too: softmax_step never reads them).
  KOKKOS_INLINE_FUNCTION void logits(const Member& team, const typename Base::Tiles& t,
                                     const float* q, const float* k, const index_t nq,
                                     const index_t nk) const {
    const index_t ld = tiles.ld, hs = HS;
    if (Tuning::channels_inner) {  // hosts: register blocks of queries × keys
      constexpr int R = kernels::kProductRows;
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, (nq + R - 1) / R), [&](const index_t rb) {
        const index_t i0 = rb * R;
        const int rows = nq - i0 < R ? int(nq - i0) : R;
        const kernels::RowRanges<R> all(0, hs);
        kernels::for_column_chunks(nk, [&](const index_t j0, auto width) {
          constexpr int NJ = decltype(width)::value;
          kernels::product_rows<R, NJ>(t.P + i0 * nk + j0, nk, q + i0 * ld, ld, 1, t.kT + j0,
                                       tiles.ldt, all, rows, false);
        });
      });
      return;
    }
    // GPUs: a thread per micro-tile of RI queries × RJ keys, queries ib + x·IB
    // and keys jb + y·JB (scores_by_micro_tiles' layout: rows ld apart on
    // distinct banks).
    constexpr int RI = Tuning::score_rows, RJ = Tuning::score_cols;
    const index_t IB = (nq + RI - 1) / RI, JB = (nk + RJ - 1) / RJ;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, IB * JB), [&](const index_t e) {
      const index_t ib = e / JB, jb = e % JB;
      const float* qi[RI];
      const float* kj[RJ];
      for (int x = 0; x < RI; ++x) qi[x] = q + (ib + x * IB < nq ? ib + x * IB : nq - 1) * ld;
      for (int y = 0; y < RJ; ++y) kj[y] = k + (jb + y * JB < nk ? jb + y * JB : nk - 1) * ld;
      float s[RI][RJ] = {};
      for (index_t d = 0; d < hs; ++d)
        for (int x = 0; x < RI; ++x)
          for (int y = 0; y < RJ; ++y) s[x][y] += qi[x][d] * kj[y][d];
      for (int x = 0; x < RI; ++x)
        for (int y = 0; y < RJ; ++y) {
          const index_t i = ib + x * IB, j = jb + y * JB;
          if (i < nq && j < nk) t.P[i * nk + j] = s[x][y];
        }
    });
  }

  // A query row a thread: its causal keys' logits α·S into probabilities
  // against the new running maximum, the sum and the accumulator rescaled
  // to it; masked pairs 0 (selected, not multiplied).
  KOKKOS_INLINE_FUNCTION void softmax_step(const Member& team, const typename Base::Tiles& t,
                                           const index_t q0, const index_t nq, const index_t k0,
                                           const index_t nk) const {
    const index_t ld = tiles.ld, hs = HS;
    const float alpha = a.alpha;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nq), [&](const index_t i) {
      const index_t causal = q0 + i - k0 + 1 < nk ? q0 + i - k0 + 1 : nk;  // keys j < this
      if (causal <= 0) return;                                             // none in this block
      float* const P = t.P + i * nk;
      float m = t.lse[i];
      for (index_t j = 0; j < causal; ++j) m = alpha * P[j] > m ? alpha * P[j] : m;
      // exp(−inf − m) = 0 at the first block; NaN logits never raise m and
      // give NaN probabilities below.
      const float scale = kernels::fast_exp_nonpositive(t.lse[i] - m);
      float s = 0.0f;
      LLMK_SIMD
      for (index_t j = 0; j < nk; ++j) {
        const float p = j < causal ? kernels::fast_exp_nonpositive(alpha * P[j] - m) : 0.0f;
        P[j] = p;
      }
      for (index_t j = 0; j < causal; ++j) s += P[j];
      t.lse[i] = m;
      t.D[i] = t.D[i] * scale + s;
      float* const acc = t.acc + i * ld;
      LLMK_SIMD
      for (index_t d = 0; d < hs; ++d) acc[d] *= scale;
    });
  }

  // out_h[t] (= or +=) acc / l and lse = m + log l of the block's queries.
  KOKKOS_INLINE_FUNCTION void write(const Member& team, const typename Base::Tiles& t,
                                    const index_t b, const index_t h, const index_t q0,
                                    const index_t nq) const {
    const index_t ld = tiles.ld, hs = HS, T = a.T, C = a.C;
    const bool ow = overwrite;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nq), [&](const index_t i) {
      lse[(b * a.NH + h) * T + q0 + i] = t.lse[i] + compat::log(t.D[i]);
    });
    if (Tuning::channels_inner) {  // a row a thread, no division per element
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nq), [&](const index_t i) {
        TOut* const row = out + (b * T + q0 + i) * C + h * hs;
        const float l = t.D[i];
        LLMK_SIMD
        for (index_t d = 0; d < hs; ++d) kernels::update(row[d], t.acc[i * ld + d] / l, ow);
      });
      return;
    }
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nq * hs), [&](const index_t e) {
      const index_t i = e / hs, d = e % hs;
      kernels::update(out[(b * T + q0 + i) * C + h * hs + d], t.acc[i * ld + d] / t.D[i], ow);
    });
  }
};

struct Flash : ImplDefaults {
  static constexpr std::string_view name = "flash";

  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    FlashForward<ExecSpace, typename P::in, typename P::out>(p.args).run(call.exec);
  }
};

}  // namespace llmk::op::attention_forward
