// The attention backward's own kernels (ops/attention_backward/ has the
// operation; llmk/attention_backward.hpp the formulas). Per (b, h), with
// α = 1/√HS, over the causal part t' ≤ t only:
//   datt[t, t']    = dout_h[t] · v[t']                       (HS terms)
//   drow[t]        = Σ_{t' ≤ t} att[t, t'] · datt[t, t']
//   dpreatt[t, t'] = att[t, t'] · (datt[t, t'] − drow[t])
//   dq[t]  = α Σ_{t' ≤ t} dpreatt[t, t'] · k[t']
//   dk[t'] = α Σ_{t ≥ t'} dpreatt[t, t'] · q[t]
//   dv[t'] =   Σ_{t ≥ t'} att[t, t'] · dout_h[t]
// Layout (llm.c's): row (b, t) of qkv and dqkv holds 3C values, q, k, v side
// by side, head h of each at h·HS; row (b, t) of dout holds C; att's row
// (b, h, t) holds T probabilities, the masked ones (t' > t) never read.
// Sums in float, one rounding into each output (kernels/update.hpp).
// Deterministic: every sum is one thread's loop or a team reduction of a
// fixed shape; no float atomics.
//
//  - attention_row_sums_naive, attention_dqkv_naive ("naive"): drow by a
//    thread per row, then a thread per element of dqkv summing its causal
//    range, datt recomputed where it is needed (no T × T array);
//  - attention_masked_copy, attention_softmax_backward ("materialized",
//    "cublas"): the T × T steps around the GEMMs, in a workspace of T × T
//    per (b, h): att with its masked part as zeros (the GEMM reads whole
//    tiles), and datt turned into dpreatt (in place where both are float) by
//    a team per row that reads and computes only the row's causal part;
//  - attention_widen: a bf16 operand copied to float for the GEMMs (whose
//    two inputs share one element type, and datt / dpreatt are float).
#pragma once

#include <kernels/attention_tuning.hpp>
#include <kernels/pack.hpp>
#include <kernels/update.hpp>
#include <llmk/types.hpp>

#include <cmath>
#include <cstdint>

namespace llmk::kernels {

// One call's arguments as raw row-major pointers (llm.c's layout above).
template <class TIn, class TD>
struct AttentionArgs {
  TD* dqkv = nullptr;         // (B·T) × 3C
  const TIn* dout = nullptr;  // (B·T) × C
  const TIn* qkv = nullptr;   // (B·T) × 3C
  const TIn* att = nullptr;   // (B·NH·T) × T
  index_t B = 0, T = 0, C = 0, NH = 1;
  float alpha = 1.0f;     // 1/√HS (attention_scale)
  bool overwrite = true;  // dqkv = (else +=)

  index_t HS() const { return C / NH; }
  // Sequences [b0, b0 + count): every array's part of them.
  AttentionArgs sequences(const index_t b0, const index_t count) const {
    AttentionArgs a = *this;
    a.dqkv += b0 * T * 3 * C;
    a.qkv += b0 * T * 3 * C;
    a.dout += b0 * T * C;
    a.att += b0 * NH * T * T;
    a.B = count;
    return a;
  }
};

// α = 1/√HS, rounded once to float.
inline float attention_scale(const index_t HS) {
  return HS > 0 ? float(1.0 / std::sqrt(double(HS))) : 1.0f;
}

// datt[t, u] of head h in sequence b: dout_h[t] · v[u], in order over d.
template <class TIn>
KOKKOS_INLINE_FUNCTION float attention_datt(const TIn* dout, const TIn* qkv, const index_t T,
                                            const index_t C, const index_t HS, const index_t b,
                                            const index_t h, const index_t t, const index_t u) {
  const TIn* const g = dout + (b * T + t) * C + h * HS;
  const TIn* const v = qkv + (b * T + u) * 3 * C + 2 * C + h * HS;
  float s = 0.0f;
  for (index_t d = 0; d < HS; ++d) s += to_float(g[d]) * to_float(v[d]);
  return s;
}

// "naive", first pass: drow[(b·NH + h)·T + t] for every row, a thread each.
template <class ExecSpace, class TIn, class TD>
void attention_row_sums_naive(const ExecSpace& exec, const AttentionArgs<TIn, TD>& a,
                              float* const drow) {
  const index_t T = a.T, C = a.C, NH = a.NH, HS = a.HS();
  const TIn* const dout = a.dout;
  const TIn* const qkv = a.qkv;
  const TIn* const att = a.att;
  Kokkos::parallel_for(
      "llmk::attention_row_sums_naive", Range<ExecSpace>(exec, 0, a.B * NH * T),
      KOKKOS_LAMBDA(const index_t r) {
        const index_t t = r % T, h = r / T % NH, b = r / T / NH;
        const TIn* const p = att + r * T;
        float s = 0.0f;
        for (index_t u = 0; u <= t; ++u)
          s += to_float(p[u]) * attention_datt(dout, qkv, T, C, HS, b, h, t, u);
        drow[r] = s;
      });
}

// "naive", second pass: each element of dqkv by a thread (consecutive
// threads on consecutive channels), its causal range summed in order.
template <class ExecSpace, class TIn, class TD>
void attention_dqkv_naive(const ExecSpace& exec, const AttentionArgs<TIn, TD>& a,
                          const float* const drow) {
  const index_t T = a.T, C = a.C, NH = a.NH, HS = a.HS();
  TD* const dqkv = a.dqkv;
  const TIn* const dout = a.dout;
  const TIn* const qkv = a.qkv;
  const TIn* const att = a.att;
  const float alpha = a.alpha;
  const bool overwrite = a.overwrite;
  Kokkos::parallel_for(
      "llmk::attention_dqkv_naive", Range<ExecSpace>(exec, 0, a.B * T * 3 * C),
      KOKKOS_LAMBDA(const index_t i) {
        const index_t row = i / (3 * C), part = i % (3 * C) / C, c = i % C;
        const index_t b = row / T, t = row % T, h = c / HS;
        const index_t head = (b * NH + h) * T;  // att's and drow's first row of (b, h)
        float s = 0.0f;
        if (part == 0) {  // dq[t]: the keys u ≤ t
          for (index_t u = 0; u <= t; ++u) {
            const float datt = attention_datt(dout, qkv, T, C, HS, b, h, t, u);
            const float dpre = to_float(att[(head + t) * T + u]) * (datt - drow[head + t]);
            s += dpre * to_float(qkv[(b * T + u) * 3 * C + C + c]);
          }
          s *= alpha;
        } else if (part == 1) {  // dk[t]: the queries u ≥ t
          for (index_t u = t; u < T; ++u) {
            const float datt = attention_datt(dout, qkv, T, C, HS, b, h, u, t);
            const float dpre = to_float(att[(head + u) * T + t]) * (datt - drow[head + u]);
            s += dpre * to_float(qkv[(b * T + u) * 3 * C + c]);
          }
          s *= alpha;
        } else {  // dv[t]: the queries u ≥ t
          for (index_t u = t; u < T; ++u)
            s += to_float(att[(head + u) * T + t]) * to_float(dout[(b * T + u) * C + c]);
        }
        update(dqkv[i], s, overwrite);
      });
}

// The T × T steps run a row (b, h, t) per vector of lanes (a warp on Cuda:
// its sums by shuffles, no shared memory or barrier), Tuning::rows_per_team
// rows in a team. Column indices are int: T < 2³¹ wherever att exists (its
// T·T elements a head would be 2⁶² or more; the entry checks NH·T·T in int64).
// A first version (a team of 128 threads per row; the masked copy over a
// flat index with 64-bit divisions per element) made "cublas" take 1.64 ms a
// call at B 8, T 1024 in bf16 on the H200, where cuBLAS's four products
// alone take 0.33 ms (perf/dev/tiled_bench.cpp).
// row_body: a functor (a struct: nvcc's extended lambdas cannot be captured
// by another one; that jumped to address 0 on the host) called as
// row_body(team, r) by the row's lanes.
template <class ExecSpace, class F>
void attention_for_rows(const char* label, const ExecSpace& exec, const index_t rows,
                        const F& row_body) {
  using Tuning = AttentionTuning<ExecSpace>;
  using Policy = Kokkos::TeamPolicy<ExecSpace, Kokkos::IndexType<index_t>>;
  using Member = typename Policy::member_type;
  if (rows == 0) return;
  constexpr int per_team = Tuning::rows_per_team;
  const index_t teams = (rows + per_team - 1) / per_team;
  // Kokkos 3 counts a league in int: teams beyond it take rows in turn.
  const index_t league = teams < index_t(INT32_MAX) ? teams : index_t(INT32_MAX);
  Kokkos::parallel_for(
      label, Policy(exec, league, per_team, Tuning::vector_length),
      KOKKOS_LAMBDA(const Member& team) {
        for (index_t g = team.league_rank(); g < teams; g += league)
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, per_team), [&](const int j) {
            const index_t r = g * per_team + j;
            if (r < rows) row_body(team, r);
          });
      });
}

// The columns [0, extent) of row t that the masked copy and the softmax
// pass write: up to the end of the row's block of `block` rows, whose GEMMs
// read the diagonal tile whole (block = T: every column).
KOKKOS_INLINE_FUNCTION int attention_row_extent(const int t, const index_t T,
                                                const index_t block) {
  const index_t end = (t / block + 1) * block;
  return int(end < T ? end : T);
}

// A row of attention_masked_copy (below).
template <class TIn, class TW>
struct AttentionMaskedCopyRow {
  const TIn* att;
  TW* w;
  index_t T;
  index_t block;
  template <class Member>
  KOKKOS_INLINE_FUNCTION void operator()(const Member& team, const index_t r) const {
    const int t = int(r % T);
    const TIn* const p = att + r * T;
    TW* const o = w + r * T;
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, attention_row_extent(t, T, block)),
                         [&](const int u) { o[u] = from_float<TW>(u <= t ? to_float(p[u]) : 0.0f); });
  }
};

// "materialized": w (rows × T, a row per (b, h, t)) ⟵ att with its masked
// part (t' > t) as zeros up to the end of the row's block of `block` rows
// (block = T: whole rows; the rest is not written); the masked part of att
// is not read.
template <class ExecSpace, class TIn, class TW>
void attention_masked_copy(const ExecSpace& exec, const TIn* const att, TW* const w,
                           const index_t rows, const index_t T, const index_t block) {
  attention_for_rows("llmk::attention_masked_copy", exec, rows,
                     AttentionMaskedCopyRow<TIn, TW>{att, w, T, block > 0 ? block : T});
}

// A row of attention_softmax_backward (below), V consecutive elements a
// lane: V = 1, or packs of V (one 16- or 8-byte load or store per array)
// where T is a multiple of V and every array is aligned to its pack. A pack
// that straddles t loads masked elements too; they are selected away, never
// used in arithmetic (a NaN there changes nothing).
template <class TIn, class TG, class TP, class TW, int V>
struct AttentionSoftmaxBackwardRow {
  const TIn* att;
  const TG* datt;
  TP* dpreatt;
  TW* att_copy;
  index_t T;
  index_t block;  // a row is written up to the end of its block of rows (T: whole rows)
  template <class Member>
  KOKKOS_INLINE_FUNCTION void operator()(const Member& team, const index_t r) const {
    using PA = PackOfSize<TIn, V>;
    using PG = PackOfSize<TG, V>;
    using PO = PackOfSize<TP, V>;
    using PC = PackOfSize<TW, V>;
    const int t = int(r % T);
    const TIn* const p = att + r * T;
    const TG* const g = datt + r * T;
    TP* const o = dpreatt + r * T;
    TW* const c = att_copy ? att_copy + r * T : nullptr;
    const int causal_packs = t / V + 1;  // the packs holding some u ≤ t
    float drow = 0.0f;
    Kokkos::parallel_reduce(
        Kokkos::ThreadVectorRange(team, causal_packs),
        [&](const int k, float& sum) {
          const PA pa = load_pack<PA>(p + k * V);
          const PG pg = load_pack<PG>(g + k * V);
          for (int j = 0; j < V; ++j)
            if (k * V + j <= t) sum += pa.get(j) * pg.get(j);
        },
        drow);
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, attention_row_extent(t, T, block) / V), [&](const int k) {
      PO out{};
      PC copy{};
      if (k < causal_packs) {
        const PA pa = load_pack<PA>(p + k * V);
        const PG pg = load_pack<PG>(g + k * V);
        for (int j = 0; j < V; ++j) {
          const bool causal = k * V + j <= t;
          const float a = causal ? pa.get(j) : 0.0f;
          out.set(j, causal ? a * (pg.get(j) - drow) : 0.0f);
          copy.set(j, a);
        }
      }
      store_pack(o + k * V, out);
      if (c) store_pack(c + k * V, copy);
    });
  }
};

// The scalar row (V = 1): any T, any alignment.
template <class TIn, class TG, class TP, class TW>
struct AttentionSoftmaxBackwardRow<TIn, TG, TP, TW, 1> {
  const TIn* att;
  const TG* datt;
  TP* dpreatt;
  TW* att_copy;
  index_t T;
  index_t block;
  template <class Member>
  KOKKOS_INLINE_FUNCTION void operator()(const Member& team, const index_t r) const {
    const int t = int(r % T);
    const TIn* const p = att + r * T;
    const TG* const g = datt + r * T;
    TP* const o = dpreatt + r * T;
    TW* const c = att_copy ? att_copy + r * T : nullptr;
    float drow = 0.0f;
    Kokkos::parallel_reduce(
        Kokkos::ThreadVectorRange(team, t + 1),
        [&](const int u, float& sum) { sum += to_float(p[u]) * to_float(g[u]); }, drow);
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, attention_row_extent(t, T, block)), [&](const int u) {
      const float a = u <= t ? to_float(p[u]) : 0.0f;
      o[u] = from_float<TP>(u <= t ? a * (to_float(g[u]) - drow) : 0.0f);
      if (c) c[u] = from_float<TW>(a);
    });
  }
};

template <int V, class T>
bool attention_pack_aligned(const T* p) {
  return reinterpret_cast<std::uintptr_t>(p) % (V * sizeof(T)) == 0;
}

// "materialized", "cublas": dpreatt ⟵ att ⊙ (datt − drow) per row (b, h, t),
// drow = Σ att·datt over the causal part, zeros over the masked part up to
// the end of the row's block of `block` rows (the GEMMs after it read
// those; block = T: whole rows; the rest is not written); and, where
// att_copy is not null, att with its masked part as zeros there too (the dv
// product's input). datt (float, rows × T) and dpreatt (float or the
// inputs' type) may be the same array: each element is read (the reduction
// is over) before its lane writes it. att's and datt's masked parts are not
// read.
template <class ExecSpace, class TIn, class TG, class TP, class TW = TP>
void attention_softmax_backward(const ExecSpace& exec, const TIn* const att,
                                const TG* const datt, TP* const dpreatt, const index_t rows,
                                const index_t T, TW* const att_copy = nullptr,
                                index_t block = 0) {
  constexpr int V = AttentionTuning<ExecSpace>::softmax_pack;
  if (block <= 0) block = T;
  const bool packed = V > 1 && T % V == 0 && block % V == 0 && attention_pack_aligned<V>(att) &&
                      attention_pack_aligned<V>(datt) && attention_pack_aligned<V>(dpreatt) &&
                      (!att_copy || attention_pack_aligned<V>(att_copy));
  if (packed)
    attention_for_rows(
        "llmk::attention_softmax_backward", exec, rows,
        AttentionSoftmaxBackwardRow<TIn, TG, TP, TW, V>{att, datt, dpreatt, att_copy, T, block});
  else
    attention_for_rows(
        "llmk::attention_softmax_backward", exec, rows,
        AttentionSoftmaxBackwardRow<TIn, TG, TP, TW, 1>{att, datt, dpreatt, att_copy, T, block});
}

// out[i] = in[i] as float, i < n.
template <class ExecSpace, class TIn>
void attention_widen(const ExecSpace& exec, const TIn* const in, float* const out,
                     const index_t n) {
  Kokkos::parallel_for(
      "llmk::attention_widen", Range<ExecSpace>(exec, 0, n),
      KOKKOS_LAMBDA(const index_t i) { out[i] = to_float(in[i]); });
}

}  // namespace llmk::kernels
