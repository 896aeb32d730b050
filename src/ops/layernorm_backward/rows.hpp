// The layer-norm backward's GPU kernel, "rows in registers"
// (ops/layernorm_backward/kernels.hpp has the formulas, the plan of the blocks,
// the partial sums' second pass and the other kernels).
//
// A team of W warps (team_size) takes a block of rows. A row belongs to S
// warps (warps_per_row: the fewest that hold it, more for wider rows), whose
// S·L lanes hold it in registers: lane l has up to row_chunks packs of V
// consecutive elements (8 or 16 bytes: rows_pack_bytes) of each of dout,
// inp and (accumulated) dinp, pack j at column (j·S·L + l)·V, so a warp's
// loads of a pack are contiguous. Every element is read from memory once:
//   1. a step's packs are loaded, all in flight at once: R rows
//      (rows_per_step) of the group of S warps;
//   2. each row's two sums (Σ dnorm, Σ dnorm ⊙ norm) are reduced over the
//      warp's lanes (Kokkos' vector reduction: shuffles) and over the row's S
//      warps (team scratch, one barrier a step);
//   3. dinp is computed from the registers and stored a pack at a time, and
//      the lane adds the row's dout ⊙ norm and dout to its own dweight and
//      dbias sums, in registers over all the rows of its group.
// The team's G = W/S groups take rows r0 + (step·R + k)·G + g in turn. At the
// end the groups add their sums in group order in team scratch, the last one
// writing the team's partial row into the workspace, and
// LayernormPartialsReduce adds the teams' rows in a fixed order.
// Deterministic: every order is fixed by M, C and the tuning.
//
// Why (H200, B 8, T 1024, dinp accumulated, docs/performance.md): the first
// kernel (LayernormBlocked) read each row from the cache three times (two
// sums, dinp, the column sums of a sub-block) and ran at 21-43 % of a copy,
// issue- and latency-bound (77 µs at C = 768 fp32, 191 at 1600; this one
// 48 and 83). llm.c's kernel 10 holds a row once too, but synchronizes its
// block for every 256 columns of every row to add the warps' column terms in
// shared memory.
//
// It needs whole packs: C a multiple of V and every row array aligned to a
// pack (layernorm_rows_fit), and C ≤ row_chunks·S·L·V for some S ≤ W.
// Other calls run LayernormBlocked.
#pragma once

#include <ops/layernorm_backward/kernels.hpp>
#include <kernels/pack.hpp>
#include <kernels/static_for.hpp>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace llmk::kernels {

// The two sums of each of R rows (RowSums, ops/layernorm_backward/kernels.hpp,
// for R at once), reduced together over a warp's lanes.
template <int R>
struct RowSumsOf {
  float dnorm[R] = {}, dnorm_norm[R] = {};
  KOKKOS_INLINE_FUNCTION RowSumsOf& operator+=(const RowSumsOf& o) {
    for (int k = 0; k < R; ++k) {
      dnorm[k] += o.dnorm[k];
      dnorm_norm[k] += o.dnorm_norm[k];
    }
    return *this;
  }
  // Kokkos 3.4's reducers join through volatile references.
  KOKKOS_INLINE_FUNCTION void operator+=(const volatile RowSumsOf& o) volatile {
    for (int k = 0; k < R; ++k) {
      dnorm[k] += o.dnorm[k];
      dnorm_norm[k] += o.dnorm_norm[k];
    }
  }
};

}  // namespace llmk::kernels

namespace Kokkos {
template <int R>
struct reduction_identity<llmk::kernels::RowSumsOf<R>> {
  KOKKOS_FORCEINLINE_FUNCTION static llmk::kernels::RowSumsOf<R> sum() { return {}; }
};
}  // namespace Kokkos

namespace llmk::kernels {

// How a call runs the rows kernel: warps_per_row S (0: it cannot), and its
// blocks of rows.
struct LayernormRowsPlan {
  int warps_per_row = 0;
  LayernormPlan blocks;
};

// The rows kernel's pack of T under a tuning.
template <class T, class Tuning>
using RowsPack = PackOf<T, Tuning::template rows_pack_bytes<T>>;

// The fewest warps per row (a power of two up to the team's warps) whose
// lanes hold a row of C elements in at most chunks_max packs each; 0 when C
// is not a multiple of the pack or no S does.
template <class TIn, class Tuning>
int layernorm_rows_warps(const index_t C) {
  constexpr int V = RowsPack<TIn, Tuning>::size, L = Tuning::vector_length;
  constexpr int most = Tuning::template row_chunks<TIn>;
  if (!Tuning::rows_in_registers || C <= 0 || C % V != 0) return 0;
  for (int S = 1; S <= Tuning::team_size; S *= 2)
    if (C <= index_t(most) * S * L * V) return S;
  return 0;
}

template <class TIn, class Tuning>
LayernormRowsPlan layernorm_rows_plan(const index_t M, const index_t C) {
  const int S = layernorm_rows_warps<TIn, Tuning>(C);
  if (S == 0) return {};
  const index_t per_block =
      std::max<index_t>(Tuning::rows_block, (M + Tuning::max_blocks - 1) / Tuning::max_blocks);
  return {S, {(M + per_block - 1) / per_block, per_block}};
}

// Whether the arrays are aligned to the rows kernel's packs.
template <class Tuning, class Args>
bool layernorm_rows_fit(const Args& a) {
  using TIn = std::remove_const_t<typename decltype(Args::inp)::value_type>;
  constexpr std::uintptr_t bytes = sizeof(RowsPack<TIn, Tuning>);
  auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % bytes == 0; };
  return aligned(a.dout.data()) && aligned(a.inp.data()) && aligned(a.dinp.data()) &&
         aligned(a.weight.data());
}

template <class ExecSpace, class Args, int S, class Tuning = LayernormTuning<ExecSpace>>
class LayernormRows {
 public:
  using TIn = std::remove_const_t<typename decltype(Args::inp)::value_type>;
  using TDinp = typename decltype(Args::dinp)::value_type;
  using Policy = Kokkos::TeamPolicy<ExecSpace, Kokkos::IndexType<index_t>,
                                    typename Tuning::rows_launch_bounds>;
  using Member = typename Policy::member_type;

  static constexpr int W = Tuning::team_size, L = Tuning::vector_length;
  static constexpr int G = W / S;  // groups of S warps, each on its own rows
  static constexpr int R = Tuning::template rows_per_step<TIn>;  // rows a group holds at once
  static constexpr int V = RowsPack<TIn, Tuning>::size;
  static constexpr int NC = Tuning::template row_chunks<TIn>;  // a lane's packs, at most
  static_assert(W % S == 0, "a team's warps must split into whole rows");
  static_assert(std::is_same_v<TDinp, TIn>, "dinp's packs are the inputs' packs");

  // plan: layernorm_rows_plan(M, C) with warps_per_row S; partials: its
  // blocks' partial rows (layernorm_blocked_workspace's floats).
  LayernormRows(const Args& a, const LayernormPlan& plan, float* partials)
      : a_(a),
        partials_(partials),
        M_(a.dout.extent(0)),
        C_(int(a.dout.extent(1))),
        bias_(a.dbias.extent(0) != 0),
        plan_(plan) {}

  void run(const ExecSpace& exec) const {
    run_rows(exec);
    LayernormPartialsReduce<ExecSpace, Args, Tuning>(a_, partials_, plan_.blocks).run(exec);
  }
  // The first kernel alone: dinp and the blocks' partial rows.
  void run_rows(const ExecSpace& exec) const {
    Policy policy(exec, plan_.blocks, W, L);
    Kokkos::parallel_for("llmk::layernorm_rows",
                         policy.set_scratch_size(0, Kokkos::PerTeam(scratch_bytes())), *this);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    float* const scratch = static_cast<float*>(team.team_shmem().get_shmem(scratch_bytes()));
    float* const col_sums = scratch;  // dweight's, then dbias's: C each
    Sums* const row_sums = reinterpret_cast<Sums*>(scratch + 2 * C_);  // [2][G][S]
    const int warp = team.team_rank(), group = warp / S, sub = warp % S;
    const index_t r0 = team.league_rank() * plan_.rows_per_block;
    const index_t r1 = r0 + plan_.rows_per_block < M_ ? r0 + plan_.rows_per_block : M_;
    const float inv_c = 1.0f / float(C_);
    const bool overwrite = a_.overwrite_dinp;

    // The lane's packs of weight, the same for every row, and its column
    // sums over all its rows.
    Pack w[NC];
    float dw[NC][V] = {}, db[NC][V] = {};
    lanes(team, [&](const int lane) {
      static_for<NC>([&](const int j) {
        const int c = column(j, sub, lane);
        if (c < C_) w[j] = load(a_.weight.data() + c);
      });
    });

    // A step: the group's R rows r0 + (step·R + k)·G + group, k < R.
    for (index_t step = 0; r0 + step * R * G < r1; ++step) {
      Row row[R];
      static_for<R>([&](const int k) { row[k] = row_at(r0 + (step * R + k) * G + group, r1); });
      // Every load of the step first, all in flight: dout, inp and (when
      // accumulated) dinp's old values.
      Pack d[R][NC], x[R][NC], old[R][NC];
      Sums s;
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(team, L),
          [&](const int lane, Sums& part) {
            static_for<R>([&](const int k) {
              static_for<NC>([&](const int j) {
                const int c = column(j, sub, lane);
                if (!row[k].valid || c >= C_) return;
                d[k][j] = load(row[k].dout + c);
                x[k][j] = load(row[k].inp + c);
                if (!overwrite) old[k][j] = load(row[k].dinp + c);
              });
            });
            static_for<R>([&](const int k) {
              static_for<NC>([&](const int j) {
                if (!row[k].valid || column(j, sub, lane) >= C_) return;
                static_for<V>([&](const int u) {
                  const float dnorm = d[k][j].get(u) * w[j].get(u);
                  part.dnorm[k] += dnorm;
                  part.dnorm_norm[k] += dnorm * ((x[k][j].get(u) - row[k].mean) * row[k].rstd);
                });
              });
            });
          },
          s);
      if constexpr (S > 1) s = row_total(team, row_sums + (step % 2) * G * S, group, sub, s);
      lanes(team, [&](const int lane) {
        static_for<R>([&](const int k) {
          const float mean = row[k].mean, rstd = row[k].rstd;
          const float mean_dnorm = s.dnorm[k] * inv_c, mean_dnorm_norm = s.dnorm_norm[k] * inv_c;
          static_for<NC>([&](const int j) {
            const int c = column(j, sub, lane);
            if (!row[k].valid || c >= C_) return;
            Pack out{};
            static_for<V>([&](const int u) {
              const float g = d[k][j].get(u);
              const float norm = (x[k][j].get(u) - mean) * rstd;
              const float v = rstd * (g * w[j].get(u) - mean_dnorm - norm * mean_dnorm_norm);
              out.set(u, overwrite ? v : old[k][j].get(u) + v);
              dw[j][u] += g * norm;
              db[j][u] += g;
            });
            store(row[k].dinp + c, out);
          });
        });
      });
    }
    write_column_sums(team, col_sums, group, sub, dw, db);
  }

 private:
  using Pack = RowsPack<TIn, Tuning>;
  using Sums = RowSumsOf<R>;

  // A row of the block: its arrays, mean and rstd; none past the block.
  struct Row {
    const TIn* dout = nullptr;
    const TIn* inp = nullptr;
    TIn* dinp = nullptr;
    float mean = 0, rstd = 0;
    bool valid = false;
  };
  KOKKOS_INLINE_FUNCTION Row row_at(const index_t m, const index_t r1) const {
    if (m >= r1) return {};
    return {&a_.dout(m, 0), &a_.inp(m, 0), &a_.dinp(m, 0), a_.mean(m), a_.rstd(m), true};
  }

  KOKKOS_INLINE_FUNCTION static Pack load(const TIn* p) {
    return *reinterpret_cast<const Pack*>(p);
  }
  KOKKOS_INLINE_FUNCTION static void store(TIn* p, const Pack& v) {
    *reinterpret_cast<Pack*>(p) = v;
  }

  // The first column of lane `lane` of warp `sub`'s pack j of a row.
  KOKKOS_INLINE_FUNCTION static int column(const int j, const int sub, const int lane) {
    return (j * S * L + sub * L + lane) * V;
  }

  // f(lane) on each lane of the calling warp (a thread on a host).
  template <class F>
  KOKKOS_INLINE_FUNCTION static void lanes(const Member& team, const F& f) {
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, L), f);
  }

  KOKKOS_INLINE_FUNCTION std::size_t scratch_bytes() const {
    return sizeof(float) * 2 * std::size_t(C_) + sizeof(Sums) * 2 * G * S;
  }

  // A row's sums over its S warps: each warp's into its slot of this step's
  // (slots alternate between two sets, so one barrier a step suffices), then
  // every warp adds the S slots in order.
  KOKKOS_INLINE_FUNCTION static Sums row_total(const Member& team, Sums* slots, const int group,
                                               const int sub, const Sums& mine) {
    Kokkos::single(Kokkos::PerThread(team), [&] { slots[group * S + sub] = mine; });
    team.team_barrier();
    Sums total;
    for (int k = 0; k < S; ++k) total += slots[group * S + k];
    return total;
  }

  // The team's partial dweight (and dbias) row: the groups' column sums
  // added in group order in scratch, the last group's added and written to
  // the workspace.
  KOKKOS_INLINE_FUNCTION void write_column_sums(const Member& team, float* col_sums,
                                                const int group, const int sub,
                                                const float (&dw)[NC][V],
                                                const float (&db)[NC][V]) const {
    float* const out = partials_ + team.league_rank() * index_t(C_) * (bias_ ? 2 : 1);
    for (int g = 0; g < G; ++g) {
      if (group == g) {
        float* const dst_w = g == G - 1 ? out : col_sums;
        float* const dst_b = g == G - 1 ? out + C_ : col_sums + C_;
        lanes(team, [&](const int lane) {
          static_for<NC>([&](const int j) {
            const int c = column(j, sub, lane);
            if (c >= C_) return;
            static_for<V>([&](const int u) {
              dst_w[c + u] = g == 0 ? dw[j][u] : col_sums[c + u] + dw[j][u];
              if (bias_) dst_b[c + u] = g == 0 ? db[j][u] : col_sums[C_ + c + u] + db[j][u];
            });
          });
        });
      }
      if (g < G - 1) team.team_barrier();
    }
  }

  Args a_;
  float* partials_;
  index_t M_;
  int C_;
  bool bias_;
  LayernormPlan plan_;
};

// Floats of workspace the rows kernel takes for a call (0 when it cannot run
// it): a partial dweight (and dbias) row per block.
template <class ExecSpace, class TIn, class Tuning = LayernormTuning<ExecSpace>>
index_t layernorm_rows_workspace(const index_t M, const index_t C, const bool bias) {
  if (M == 0 || C == 0) return 0;
  const LayernormRowsPlan plan = layernorm_rows_plan<TIn, Tuning>(M, C);
  return plan.warps_per_row == 0 ? 0 : plan.blocks.blocks * C * (bias ? 2 : 1);
}

// Runs the rows kernel with the plan's warps per row (a power of two up to
// the team's warps: one instantiation each).
template <int S, class ExecSpace, class Tuning, class Args>
bool run_layernorm_rows_with(const ExecSpace& exec, const Args& a, const LayernormRowsPlan& plan,
                             float* partials) {
  if constexpr (S <= Tuning::team_size) {
    if (plan.warps_per_row != S) return false;
    LayernormRows<ExecSpace, Args, S, Tuning>(a, plan.blocks, partials).run(exec);
    return true;
  } else {
    return false;
  }
}

template <class ExecSpace, class Tuning = LayernormTuning<ExecSpace>, class Args>
void run_layernorm_rows(const ExecSpace& exec, const Args& a, const LayernormRowsPlan& plan,
                        float* partials) {
  const bool ran = run_layernorm_rows_with<1, ExecSpace, Tuning>(exec, a, plan, partials) ||
                   run_layernorm_rows_with<2, ExecSpace, Tuning>(exec, a, plan, partials) ||
                   run_layernorm_rows_with<4, ExecSpace, Tuning>(exec, a, plan, partials) ||
                   run_layernorm_rows_with<8, ExecSpace, Tuning>(exec, a, plan, partials) ||
                   run_layernorm_rows_with<16, ExecSpace, Tuning>(exec, a, plan, partials);
  if (!ran)
    throw std::logic_error("llmk: layernorm_rows_plan chose warps per row the kernel lacks");
}

}  // namespace llmk::kernels
