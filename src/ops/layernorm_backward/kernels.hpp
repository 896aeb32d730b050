// The layer-norm backward kernels (ops/layernorm_backward/ has the operation).
// For row m with norm = (inp − mean_m)·rstd_m and dnorm = dout ⊙ weight:
//   dinp[m, :] ⟵ rstd_m · (dnorm − mean_c(dnorm) − norm · mean_c(dnorm ⊙ norm))
//   dweight    ⟵ Σ_m dout[m, :] ⊙ norm[m, :]
//   dbias      ⟵ Σ_m dout[m, :]
// Sums in float (the row means as llm.c's), one rounding into each output
// (kernels/update.hpp). Deterministic: no floating-point atomics; the column
// sums are added in an order fixed by M and C alone (LayernormPlan), so the
// results are bitwise the same from run to run and on any thread count.
//
//  - layernorm_rows_naive / layernorm_columns_naive: a thread per row of dinp,
//    a thread per column of dweight and dbias summing all M rows in order
//    (the baseline: two passes over dout and inp, strided column reads);
//  - layernorm_blocked: a team per block of rows (one pass over dout and
//    inp). For each sub-block of rows it computes their dinp (a row per
//    thread-row, the two row means by a vector reduction) and adds the
//    sub-block's dout ⊙ norm and dout to the team's float partial column
//    sums in the workspace (columns over all the team's threads: coalesced on
//    a GPU, unit-stride on a CPU; the sub-block is still in cache); then
//    LayernormPartialsReduce adds the teams' partials in a fixed order into
//    dweight and dbias;
//  - ops/layernorm_backward/rows.hpp: the GPU's, where C is a multiple of its
//    packs: rows held in registers, read once (LayernormBlocked is its
//    fallback).
#pragma once

#include <kernels/static_for.hpp>
#include <kernels/tuning.hpp>
#include <kernels/update.hpp>
#include <llmk/types.hpp>

#include <algorithm>
#include <type_traits>

namespace llmk::kernels {

// The two row sums of a row's dinp: Σ dnorm and Σ dnorm ⊙ norm, reduced
// together (one pass over the row).
struct RowSums {
  float dnorm = 0, dnorm_norm = 0;
  KOKKOS_INLINE_FUNCTION RowSums& operator+=(const RowSums& o) {
    dnorm += o.dnorm;
    dnorm_norm += o.dnorm_norm;
    return *this;
  }
  // Kokkos 3.4's reducers join through volatile references.
  KOKKOS_INLINE_FUNCTION void operator+=(const volatile RowSums& o) volatile {
    dnorm += o.dnorm;
    dnorm_norm += o.dnorm_norm;
  }
};

}  // namespace llmk::kernels

namespace Kokkos {
template <>
struct reduction_identity<llmk::kernels::RowSums> {
  KOKKOS_FORCEINLINE_FUNCTION static llmk::kernels::RowSums sum() { return {}; }
};
}  // namespace Kokkos

namespace llmk::kernels {

// How layernorm_blocked splits the rows: `blocks` teams of `rows_per_block`
// rows (the last may have fewer), each in sub-blocks of LayernormTuning's
// sub_rows. It depends on M, C and the tuning's constants only (not on the
// thread count), so that the order of the column sums does too.
struct LayernormPlan {
  index_t blocks = 0, rows_per_block = 0;
};

template <class ExecSpace, class Tuning = LayernormTuning<ExecSpace>>
LayernormPlan layernorm_plan(const index_t M) {
  const index_t per_block =
      std::max<index_t>(Tuning::rows_per_block, (M + Tuning::max_blocks - 1) / Tuning::max_blocks);
  return {(M + per_block - 1) / per_block, per_block};
}

// Floats of workspace layernorm_blocked takes: a partial dweight (and dbias)
// row per block.
template <class ExecSpace, class Tuning = LayernormTuning<ExecSpace>>
index_t layernorm_blocked_workspace(const index_t M, const index_t C, const bool bias) {
  if (M == 0 || C == 0) return 0;
  return layernorm_plan<ExecSpace, Tuning>(M).blocks * C * (bias ? 2 : 1);
}

// What every kernel reads and writes, as views of the precision's types.
template <class ExecSpace, class TIn, class TDinp, class TDweight, class TDbias>
struct LayernormArgs {
  Matrix<ExecSpace, TDinp> dinp;             // M × C
  Vector<ExecSpace, TDweight> dweight;       // C
  Vector<ExecSpace, TDbias> dbias;           // C, or empty
  ConstMatrix<ExecSpace, TIn> dout, inp;     // M × C
  ConstVector<ExecSpace, TIn> weight;        // C
  ConstVector<ExecSpace, float> mean, rstd;  // M
  bool overwrite_dinp = false, overwrite_dweight = false, overwrite_dbias = false;
};

// dinp of row m, given its two row sums.
template <class Args>
KOKKOS_INLINE_FUNCTION void layernorm_dinp_row(const Args& a, const index_t m, const index_t c,
                                               const RowSums& s, const float inv_c) {
  const float mean = a.mean(m), rstd = a.rstd(m);
  const float norm = (to_float(a.inp(m, c)) - mean) * rstd;
  const float dnorm = to_float(a.dout(m, c)) * to_float(a.weight(c));
  const float v = rstd * (dnorm - s.dnorm * inv_c - norm * (s.dnorm_norm * inv_c));
  update(a.dinp(m, c), v, a.overwrite_dinp);
}

template <class Args>
KOKKOS_INLINE_FUNCTION void layernorm_row_terms(const Args& a, const index_t m, const index_t c,
                                                RowSums& s) {
  const float norm = (to_float(a.inp(m, c)) - a.mean(m)) * a.rstd(m);
  const float dnorm = to_float(a.dout(m, c)) * to_float(a.weight(c));
  s.dnorm += dnorm;
  s.dnorm_norm += dnorm * norm;
}

// --- naive ------------------------------------------------------------------

template <class ExecSpace, class Args>
void layernorm_rows_naive(const ExecSpace& exec, const Args& a) {
  const index_t C = a.dinp.extent(1);
  const float inv_c = 1.0f / float(C);
  Kokkos::parallel_for(
      "llmk::layernorm_dinp_naive", Range<ExecSpace>(exec, 0, index_t(a.dinp.extent(0))),
      KOKKOS_LAMBDA(const index_t m) {
        RowSums s;
        for (index_t c = 0; c < C; ++c) layernorm_row_terms(a, m, c, s);
        for (index_t c = 0; c < C; ++c) layernorm_dinp_row(a, m, c, s, inv_c);
      });
}

template <class ExecSpace, class Args>
void layernorm_columns_naive(const ExecSpace& exec, const Args& a) {
  const index_t M = a.dout.extent(0);
  const bool bias = a.dbias.extent(0) != 0;
  Kokkos::parallel_for(
      "llmk::layernorm_dweight_naive", Range<ExecSpace>(exec, 0, index_t(a.dweight.extent(0))),
      KOKKOS_LAMBDA(const index_t c) {
        float dw = 0, db = 0;
        for (index_t m = 0; m < M; ++m) {
          const float d = to_float(a.dout(m, c));
          dw += d * (to_float(a.inp(m, c)) - a.mean(m)) * a.rstd(m);
          db += d;
        }
        update(a.dweight(c), dw, a.overwrite_dweight);
        if (bias) update(a.dbias(c), db, a.overwrite_dbias);
      });
}

// --- the blocks' partial column sums -----------------------------------------

// dweight and dbias from the blocks' partial rows (`blocks` rows of C floats
// of dweight, then C of dbias when there is one): a team per reduce_columns
// columns of one of the two, each of its threads summing every
// reduce_threads-th block's partials in block order, its loads 8 at a time
// (all in flight), then the threads' sums added in a fixed tree (an order
// fixed by the tuning: no atomics), one rounding into each output.
template <class ExecSpace, class Args, class Tuning = LayernormTuning<ExecSpace>>
class LayernormPartialsReduce {
 public:
  static constexpr int kCols = Tuning::reduce_columns, kThreads = Tuning::reduce_threads;
  static_assert((kThreads & (kThreads - 1)) == 0, "a power of two: the threads' sums in a tree");
  // (Cuda: a team of 1024 threads runs only with ≤ 64 registers each; the
  // unrolled loads took 72 without the bound.)
  using Policy = Kokkos::TeamPolicy<ExecSpace, Kokkos::IndexType<index_t>,
                                    Kokkos::LaunchBounds<kThreads * Tuning::vector_length, 1>>;
  using Member = typename Policy::member_type;
  static constexpr int kLoads = 8;  // a thread's loads in flight

  LayernormPartialsReduce(const Args& a, const float* partials, const index_t blocks)
      : a_(a),
        partials_(partials),
        blocks_(blocks),
        C_(a.dout.extent(1)),
        groups_((C_ + kCols - 1) / kCols),
        bias_(a.dbias.extent(0) != 0) {}

  void run(const ExecSpace& exec) const {
    Policy policy(exec, groups_ * (bias_ ? 2 : 1), kThreads, Tuning::vector_length);
    Kokkos::parallel_for(
        "llmk::layernorm_partials_reduce",
        policy.set_scratch_size(0, Kokkos::PerTeam(sizeof(float) * (kThreads + 1) * kCols)), *this);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    float* const sums =
        static_cast<float*>(team.team_shmem().get_shmem(sizeof(float) * (kThreads + 1) * kCols));
    const bool bias = team.league_rank() >= groups_;  // the team's output: dbias or dweight
    const index_t c0 = team.league_rank() % groups_ * kCols, stride = C_ * (bias_ ? 2 : 1);
    const float* const part = partials_ + (bias ? C_ : 0);
    const int t = team.team_rank();
    // The output's old values (0 when overwritten), loaded first: their
    // latency hides behind the partials'.
    float* const old = sums + kThreads * kCols;
    if (t == 0) {
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, kCols), [&](const int l) {
        const index_t c = c0 + l;
        float v = 0;
        if (c < C_ && bias && !a_.overwrite_dbias) v = to_float(a_.dbias(c));
        if (c < C_ && !bias && !a_.overwrite_dweight) v = to_float(a_.dweight(c));
        old[l] = v;
      });
    }
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, kCols), [&](const int l) {
      const index_t c = c0 + l;
      float sum = 0;
      for (index_t b0 = t; c < C_ && b0 < blocks_; b0 += kLoads * kThreads) {
        float v[kLoads];
        static_for<kLoads>([&](const int i) {
          const index_t b = b0 + index_t(i) * kThreads;
          v[i] = b < blocks_ ? part[b * stride + c] : 0.0f;
        });
        static_for<kLoads>([&](const int i) { sum += v[i]; });
      }
      sums[t * kCols + l] = sum;
    });
    // The threads' sums in a fixed tree: thread t adds t + half's.
    for (int half = kThreads / 2; half >= 1; half /= 2) {
      team.team_barrier();
      if (t < half) {
        Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, kCols), [&](const int l) {
          sums[t * kCols + l] += sums[(t + half) * kCols + l];
        });
      }
    }
    if (t != 0) return;
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, kCols), [&](const int l) {
      const index_t c = c0 + l;
      if (c >= C_) return;
      if (bias) {
        update(a_.dbias(c), old[l] + sums[l], true);
      } else {
        update(a_.dweight(c), old[l] + sums[l], true);
      }
    });
  }

 private:
  Args a_;
  const float* partials_;
  index_t blocks_, C_, groups_;
  bool bias_;
};

// --- blocked ----------------------------------------------------------------

template <class ExecSpace, class Args, class Tuning = LayernormTuning<ExecSpace>>
class LayernormBlocked {
 public:
  using Policy = Kokkos::TeamPolicy<ExecSpace, Kokkos::IndexType<index_t>>;
  using Member = typename Policy::member_type;
  // One thread per team and no lanes (the host's): rows and columns are
  // plain loops that the compiler vectorizes.
  static constexpr bool one_thread = Tuning::team_size == 1 && Tuning::vector_length == 1;
  using TIn = typename decltype(Args::inp)::value_type;  // const
  using TDinp = typename decltype(Args::dinp)::value_type;

  // partials: layernorm_blocked_workspace floats.
  LayernormBlocked(const Args& a, float* partials)
      : a_(a),
        partials_(partials),
        M_(a.dout.extent(0)),
        C_(a.dout.extent(1)),
        bias_(a.dbias.extent(0) != 0),
        plan_(layernorm_plan<ExecSpace, Tuning>(M_)) {}

  void run(const ExecSpace& exec) const {
    Kokkos::parallel_for("llmk::layernorm_blocked",
                         Policy(exec, plan_.blocks, Tuning::team_size, Tuning::vector_length),
                         *this);
    LayernormPartialsReduce<ExecSpace, Args, Tuning>(a_, partials_, plan_.blocks).run(exec);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    const index_t block = team.league_rank();
    const index_t r0 = block * plan_.rows_per_block;
    const index_t r1 = r0 + plan_.rows_per_block < M_ ? r0 + plan_.rows_per_block : M_;
    float* const dw = partials_ + block * C_ * (bias_ ? 2 : 1);
    float* const db = dw + C_;
    if constexpr (one_thread) {
      for (index_t m = r0; m < r1; ++m) host_row(m, dw, db, m == r0);
      return;
    }
    const float inv_c = 1.0f / float(C_);
    // Rows through pointers and columns as int (Blocked's max_cols): Views'
    // 64-bit index arithmetic on every element made the kernel issue-bound
    // (H200, C = 768: 45 % of the SMs' issue slots busy at 1 TB/s).
    const int C = int(C_);
    const TIn* const weight = a_.weight.data();
    // A lane's columns come in groups of V elements G apart (G = C / V
    // rounded up), V independent loads of each array a step.
    constexpr int V = Tuning::vec;
    const int G = (C + V - 1) / V;
    for (index_t s0 = r0; s0 < r1; s0 += Tuning::sub_rows) {
      const index_t s1 = s0 + Tuning::sub_rows < r1 ? s0 + Tuning::sub_rows : r1;
      // dinp: a row per thread-row, its lanes along the row.
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, s0, s1), [&](const index_t m) {
        const TIn* const dout = &a_.dout(m, 0);
        const TIn* const inp = &a_.inp(m, 0);
        TDinp* const dinp = &a_.dinp(m, 0);
        const float mean = a_.mean(m), rstd = a_.rstd(m);
        RowSums s;
        Kokkos::parallel_reduce(
            Kokkos::ThreadVectorRange(team, G),
            [&](const int g, RowSums& part) {
              for (int k = 0; k < V; ++k) {
                const int c = g + k * G;
                if (c >= C) break;
                const float dnorm = to_float(dout[c]) * to_float(weight[c]);
                part.dnorm += dnorm;
                part.dnorm_norm += dnorm * ((to_float(inp[c]) - mean) * rstd);
              }
            },
            s);
        const float a = s.dnorm * inv_c, b = s.dnorm_norm * inv_c;
        Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, G), [&](const int g) {
          for (int k = 0; k < V; ++k) {
            const int c = g + k * G;
            if (c >= C) break;
            const float norm = (to_float(inp[c]) - mean) * rstd;
            const float dnorm = to_float(dout[c]) * to_float(weight[c]);
            update(dinp[c], rstd * (dnorm - a - norm * b), a_.overwrite_dinp);
          }
        });
      });
      // The sub-block's column sums into the team's partial rows: a column
      // per thread, its rows in order (their loads first, all in flight).
      // (No barrier: a column is always the same thread's, and the dinp rows
      // are not read here.)
      const bool first = s0 == r0;
      const int rows = int(s1 - s0);
      const TIn* const dout0 = &a_.dout(s0, 0);
      const TIn* const inp0 = &a_.inp(s0, 0);
      const index_t ld_dout = a_.dout.stride(0), ld_inp = a_.inp.stride(0);
      Kokkos::parallel_for(Kokkos::TeamVectorRange(team, C), [&](const int c) {
        constexpr int R = Tuning::sub_rows;
        float d[R], x[R];
        for (int i = 0; i < R; ++i) {
          d[i] = i < rows ? to_float(dout0[i * ld_dout + c]) : 0.0f;
          x[i] = i < rows ? (to_float(inp0[i * ld_inp + c]) - a_.mean(s0 + i)) * a_.rstd(s0 + i)
                          : 0.0f;
        }
        float w = first ? 0.0f : dw[c], b = first || !bias_ ? 0.0f : db[c];
        for (int i = 0; i < R; ++i) {
          w += d[i] * x[i];
          b += d[i];
        }
        dw[c] = w;
        if (bias_) db[c] = b;
      });
    }
  }

 private:
  // The host's row: its two sums, its dinp, then its terms added to the
  // block's partial rows (= for the block's first). Through pointers: Views'
  // index arithmetic per element kept GCC from vectorizing the loops.
  KOKKOS_INLINE_FUNCTION void host_row(const index_t m, float* const dw, float* const db,
                                       const bool first) const {
    const TIn* const dout = &a_.dout(m, 0);
    const TIn* const inp = &a_.inp(m, 0);
    const TIn* const weight = a_.weight.data();
    TDinp* const dinp = &a_.dinp(m, 0);
    const float mean = a_.mean(m), rstd = a_.rstd(m);
    // The sums in the compiler's vector lanes (a float sum vectorizes only
    // when allowed to reassociate: OpenMP's simd reduction; the order is
    // the binary's, the same on every call and thread count). Written out
    // in 8 lanes instead, GCC 12 vectorized the loop around them and added
    // each lane in order with scalar adds and shuffles (476 instructions a
    // 8 columns, AVX-512).
    float sum_dnorm = 0, sum_dnorm_norm = 0;
    LLMK_SIMD_REDUCTION(sum_dnorm, sum_dnorm_norm)
    for (index_t c = 0; c < C_; ++c) {
      const float dnorm = to_float(dout[c]) * to_float(weight[c]);
      sum_dnorm += dnorm;
      sum_dnorm_norm += dnorm * ((to_float(inp[c]) - mean) * rstd);
    }
    const RowSums s{sum_dnorm, sum_dnorm_norm};
    const float a = s.dnorm * (1.0f / float(C_)), b = s.dnorm_norm * (1.0f / float(C_));
    const bool overwrite = a_.overwrite_dinp;
    if (first) {
      bias_
          ? host_columns<true, true>(dinp, dw, db, dout, inp, weight, mean, rstd, a, b, overwrite)
          : host_columns<true, false>(dinp, dw, db, dout, inp, weight, mean, rstd, a, b, overwrite);
    } else {
      bias_
          ? host_columns<false, true>(dinp, dw, db, dout, inp, weight, mean, rstd, a, b, overwrite)
          : host_columns<false, false>(dinp, dw, db, dout, inp, weight, mean, rstd, a, b,
                                       overwrite);
    }
  }

  // The host's row, given its two means a and b: dinp and the row's terms
  // of the partial rows dw and db (= for the block's first row) in one loop,
  // each element converted once (bf16 at C = 768 on one thread: 4.1 -> 3.4
  // ms). Restrict pointers, one loop per combination of First and Bias: so
  // that GCC vectorizes it (with the outputs possibly aliasing the inputs
  // it ran the fp32 loop scalar, 3.5 -> 9.3 ms).
  template <bool First, bool Bias>
  KOKKOS_INLINE_FUNCTION void host_columns(TDinp* KOKKOS_RESTRICT dinp, float* KOKKOS_RESTRICT dw,
                                           float* KOKKOS_RESTRICT db,
                                           const TIn* KOKKOS_RESTRICT dout,
                                           const TIn* KOKKOS_RESTRICT inp,
                                           const TIn* KOKKOS_RESTRICT weight, const float mean,
                                           const float rstd, const float a, const float b,
                                           const bool overwrite) const {
    for (index_t k = 0; k < C_; ++k) {
      const float d = to_float(dout[k]);
      const float norm = (to_float(inp[k]) - mean) * rstd;
      const float v = rstd * (d * to_float(weight[k]) - a - norm * b);
      dinp[k] = from_float<TDinp>(overwrite ? v : to_float(dinp[k]) + v);
      dw[k] = First ? d * norm : dw[k] + d * norm;
      if constexpr (Bias) db[k] = First ? d : db[k] + d;
    }
  }

  Args a_;
  float* partials_;
  index_t M_, C_;
  bool bias_;
  LayernormPlan plan_;
};

}  // namespace llmk::kernels
