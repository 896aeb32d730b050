// A hierarchical Kokkos GEMM, the kernel of matmul's "tiled" implementation:
//
//   D (R × N) += op(A) · B,   B row-major K × N,
//   dinp    (M × C)  += dout · weight     TransA = false: op(A)(r, k) = dout(r, k)
//   dweight (OC × C) += doutᵀ · inp       TransA = true:  op(A)(r, k) = dout(k, r)
//
// A team computes a bm × bn tile of D. It walks K in chunks of bk: the team
// stages the chunk of op(A) (bm × bk) and of B (bk × bn) in team scratch,
// zero-filled outside the matrices, then each thread multiplies them into a
// register micro-tile with constant-trip loops the compilers unroll (FMAs on
// registers). Tile sizes, thread grid and scratch layout come from
// TiledTuning<ExecSpace> (tuning.hpp); this file has no backend #ifdefs.
//
// Thread (ty, tx) of the team_size × vector_length grid owns, within a
// sub-tile of sm = tm·team_size rows × sn = tn·vector_length columns, the rows
// ty + i·team_size and the columns tx + j·vector_length. On a GPU the sub-tile
// is the whole tile: a warp's scratch reads are broadcasts (same row) or
// consecutive words (distinct banks), its global writes are coalesced, and the
// micro-tile stays in registers over all of K (D is updated once). On a host
// (1 × 1 grid) the micro-tile is contiguous (4 × 24 floats: 12 AVX2
// registers) and the thread sweeps the tile's many sub-tiles per chunk,
// adding each into D, which stays in cache.
//
// Scratch layout: op(A) as [bm/sm panels][bk][sm + a_pad] (transposed, so a
// thread's micro-kernel reads its rows at one k from one scratch row), B as
// [bn/sn panels][bk][sn]. On a host a panel is exactly what one micro-kernel
// reads, a contiguous block that stays in L1. On a GPU there is one panel, and
// a_pad keeps the transposing stores of the non-transposed A free of bank
// conflicts.
//
// Deterministic: every output element is computed by one thread, in a fixed
// order; no atomics.
#pragma once

#include <kernels/tuning.hpp>
#include <llmk/types.hpp>

#include <cstdint>
#include <type_traits>

namespace llmk::kernels {

template <bool TransA, bool FuseBias, class ExecSpace, class Tuning = TiledTuning<ExecSpace>>
class TiledGemm {
 public:
  using Policy = Kokkos::TeamPolicy<ExecSpace, Kokkos::IndexType<index_t>,
                                    typename Tuning::launch_bounds>;
  using Member = typename Policy::member_type;
  using Scratch = Kokkos::View<float*, typename ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  static constexpr int TY = Tuning::team_size, TX = Tuning::vector_length, NT = TY * TX;
  static constexpr int TM = Tuning::tm, TN = Tuning::tn;
  static constexpr int BM = Tuning::bm, BN = Tuning::bn, BK = Tuning::bk;
  static constexpr int SM = TM * TY, SN = TN * TX;  // a sub-tile: one micro-tile per thread
  static constexpr int a_ld = SM + Tuning::a_pad;   // floats from k to k + 1 in an A panel
  static constexpr int a_panel = BK * a_ld, b_panel = BK * SN;
  static constexpr int a_floats = BM / SM * a_panel, b_floats = BN / SN * b_panel;
  static constexpr int align = 16;  // floats: 64 bytes, a cache line
  static constexpr int scratch_floats = a_floats + b_floats + align;  // + room to align
  // One sub-tile per thread (GPU): acc lives in registers across all K chunks.
  static constexpr bool one_subtile = SM == BM && SN == BN;
  // Rows of a bias panel each thread sums (FuseBias).
  static constexpr int bias_rows = (SM + NT - 1) / NT;

  static_assert(BM % SM == 0 && BN % SN == 0, "a tile must be whole sub-tiles");

  // D += op(A)·B; dbias += Σ_k op(A)(r, k) when FuseBias (TransA only: op(A)
  // = doutᵀ, whose rows are the output channels).
  TiledGemm(const Matrix<ExecSpace>& D, const ConstMatrix<ExecSpace>& A,
            const ConstMatrix<ExecSpace>& B, const Vector<ExecSpace>& dbias = {})
      : d_(D.data()),
        a_(A.data()),
        b_(B.data()),
        bias_(dbias.data()),
        ldd_(D.extent(1)),
        lda_(A.extent(1)),
        ldb_(B.extent(1)),
        rows_(D.extent(0)),
        cols_(D.extent(1)),
        depth_(B.extent(0)),
        tiles_n_((cols_ + BN - 1) / BN) {
    static_assert(!FuseBias || TransA, "the bias is fused into the dweight product");
  }

  void run(const ExecSpace& exec, const char* label) const {
    const index_t tiles_m = (rows_ + BM - 1) / BM;
    Policy policy(exec, tiles_m * tiles_n_, TY, TX);
    policy = policy.set_scratch_size(Tuning::scratch_level, Kokkos::PerTeam(scratch_bytes()));
    Kokkos::parallel_for(label, policy, *this);
  }

  static size_t scratch_bytes() { return Scratch::shmem_size(scratch_floats); }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    const index_t m0 = team.league_rank() / tiles_n_ * BM;
    const index_t n0 = team.league_rank() % tiles_n_ * BN;
    const bool bias_team = FuseBias && n0 == 0;  // sees every op(A) element of its rows once
    const int level = Tuning::scratch_level;  // (a copy: team_scratch takes a reference)
    const Scratch scratch(team.team_scratch(level), scratch_floats);
    float* const buf = aligned(scratch.data());

    float acc[TM][TN] = {};  // one_subtile: the thread's sums over all of K
    double bsum[FuseBias ? BM / SM : 1][bias_rows] = {};  // FuseBias: the thread's bias rows
    for (index_t k0 = 0; k0 < depth_; k0 += BK) {
      stage(team, buf, k0, m0, n0);
      team.team_barrier();
      compute(team, buf, m0, n0, acc, bias_team, bsum);
      team.team_barrier();  // buf is restaged next
    }
    if constexpr (one_subtile) {
      for_each_thread(team, [&](int ty, int tx) {
        float tile[TM][TN];
        to_tile(acc, tile);
        add_to_d(tile, m0 + ty, n0 + tx);
      });
    }
    if (bias_team) write_bias(team, m0, bsum);
  }

 private:
  float* d_;
  const float* a_;
  const float* b_;
  float* bias_;
  index_t ldd_, lda_, ldb_;
  index_t rows_, cols_, depth_;  // R, N, K
  index_t tiles_n_;

  KOKKOS_INLINE_FUNCTION static float* aligned(float* p) {
    const auto misalign = reinterpret_cast<std::uintptr_t>(p) % (align * sizeof(float));
    return misalign ? p + (align * sizeof(float) - misalign) / sizeof(float) : p;
  }

  // f(ty, tx) on each thread of the team. Per-thread state declared outside
  // (acc) is private to a thread because a GPU runs each (ty, tx) on its own
  // thread and the host grid is 1 × 1.
  template <class F>
  KOKKOS_INLINE_FUNCTION static void for_each_thread(const Member& team, const F& f) {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, TY), [&](const int ty) {
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, TX), [&](const int tx) { f(ty, tx); });
    });
  }

  // f(row, panel, c) over the thread tid's share of a block of Rows rows,
  // each row Panels × Width elements contiguous in memory (column
  // panel·Width + c). Consecutive threads take consecutive columns (coalesced
  // on GPUs); a lone host thread sweeps whole rows (vectorized copies). The
  // trip counts are compile-time so that nvcc unrolls the loops (with the
  // bounds as `row < Rows`, the GPU kernel ran at half speed).
  template <int Rows, int Panels, int Width, class F>
  KOKKOS_INLINE_FUNCTION static void block_loop(const int tid, const F& f) {
    constexpr int cols = Panels * Width;
    constexpr int col_threads = NT < cols ? NT : cols;
    constexpr int row_threads = NT / col_threads;
    static_assert(NT % col_threads == 0 && Width % col_threads == 0 && Rows % row_threads == 0,
                  "the team's threads must tile the staged block evenly");
    constexpr int row_trips = Rows / row_threads, col_trips = Width / col_threads;
    const int row0 = tid / col_threads, c0 = tid % col_threads;
    for (int i = 0; i < row_trips; ++i)
      for (int p = 0; p < Panels; ++p)
        for (int j = 0; j < col_trips; ++j) f(row0 + i * row_threads, p, c0 + j * col_threads);
  }

  // ---- staging: op(A) chunk (bm × bk) and B chunk (bk × bn) ----------------
  // g(scratch offset, r, k) for each element of op(A)'s chunk, walked along
  // A's contiguous dimension (r for TransA, k otherwise).
  template <class G>
  KOKKOS_INLINE_FUNCTION static void walk_a(const int tid, const G& g) {
    if constexpr (TransA) {
      block_loop<BK, BM / SM, SM>(tid, [&](int k, int p, int c) {
        g((p * BK + k) * a_ld + c, p * SM + c, k);
      });
    } else {  // transposed into scratch
      block_loop<BM, 1, BK>(tid, [&](int r, int, int k) {
        g((r / SM * BK + k) * a_ld + r % SM, r, k);
      });
    }
  }

  // g(scratch offset, k, n) for each element of B's chunk.
  template <class G>
  KOKKOS_INLINE_FUNCTION static void walk_b(const int tid, const G& g) {
    block_loop<BK, BN / SN, SN>(tid, [&](int k, int p, int c) {
      g((p * BK + k) * SN + c, k, p * SN + c);
    });
  }

  // op(A)(r, k) and B(k, n); 0 outside the matrices unless Inside says the
  // whole chunk is inside (then there are no bounds checks and the host's
  // copy loops vectorize).
  template <bool Inside>
  KOKKOS_INLINE_FUNCTION float a_at(const index_t r, const index_t k) const {
    if (!Inside && (r >= rows_ || k >= depth_)) return 0.0f;
    return TransA ? a_[k * lda_ + r] : a_[r * lda_ + k];
  }
  template <bool Inside>
  KOKKOS_INLINE_FUNCTION float b_at(const index_t k, const index_t n) const {
    if (!Inside && (k >= depth_ || n >= cols_)) return 0.0f;
    return b_[k * ldb_ + n];
  }

  KOKKOS_INLINE_FUNCTION void stage(const Member& team, float* buf, const index_t k0,
                                    const index_t m0, const index_t n0) const {
    float* const as = buf;
    float* const bs = buf + a_floats;
    const bool inside = k0 + BK <= depth_ && m0 + BM <= rows_ && n0 + BN <= cols_;
    auto copy = [&](const int tid, auto inside_t) {
      constexpr bool in = decltype(inside_t)::value;
      walk_a(tid, [&](int off, int r, int k) { as[off] = a_at<in>(m0 + r, k0 + k); });
      walk_b(tid, [&](int off, int k, int n) { bs[off] = b_at<in>(k0 + k, n0 + n); });
    };
    for_each_thread(team, [&](int ty, int tx) {
      if (inside) {
        copy(ty * TX + tx, std::true_type{});
      } else {
        copy(ty * TX + tx, std::false_type{});
      }
    });
  }

  // ---- compute ---------------------------------------------------------------
  // The micro-kernel keeps column j of its micro-tile in acc[i][slot(j)], in
  // reverse order, and its result goes through to_tile() (a plain copy into
  // natural order) before anything else reads it. Why: GCC 12's SLP vectorizer
  // orders loop-carried accumulators by how they are used after the loop; with
  // forward storage, or with the guarded stores of add_to_d reading acc
  // directly, it puts a lane-permuting vpermd on every B load of the loop
  // (measured 40% slower). For nvcc all of this is register renaming.
  KOKKOS_INLINE_FUNCTION static constexpr int slot(const int j) { return TN - 1 - j; }

  // acc[i][slot(j)] += Σ_k a[k·a_ld + i·TY] · b[k·SN + j·TX]
  KOKKOS_INLINE_FUNCTION static void micro_kernel(float (&acc)[TM][TN], const float* a,
                                                  const float* b) {
    for (int k = 0; k < BK; ++k) {
      float av[TM], bv[TN];
      LLMK_UNROLL for (int i = 0; i < TM; ++i) av[i] = a[k * a_ld + i * TY];
      LLMK_UNROLL for (int j = 0; j < TN; ++j) bv[j] = b[k * SN + j * TX];
      LLMK_UNROLL for (int i = 0; i < TM; ++i)
        LLMK_UNROLL for (int j = 0; j < TN; ++j) acc[i][slot(j)] += av[i] * bv[j];
    }
  }

  KOKKOS_INLINE_FUNCTION static void to_tile(const float (&acc)[TM][TN], float (&tile)[TM][TN]) {
    LLMK_UNROLL for (int i = 0; i < TM; ++i)
      LLMK_UNROLL for (int j = 0; j < TN; ++j) tile[i][j] = acc[i][slot(j)];
  }

  // D(r0 + i·TY, c0 + j·TX) += tile[i][j], within D's bounds.
  KOKKOS_INLINE_FUNCTION void add_to_d(const float (&tile)[TM][TN], const index_t r0,
                                       const index_t c0) const {
    if (r0 + (TM - 1) * TY < rows_ && c0 + (TN - 1) * TX < cols_) {
      // (Not force-unrolled: GCC then vectorizes each row, with a run-time
      // check that the rows do not overlap.)
      for (int i = 0; i < TM; ++i) {
        float* const row = d_ + (r0 + i * TY) * ldd_ + c0;
        for (int j = 0; j < TN; ++j) row[j * TX] += tile[i][j];
      }
    } else {
      for (int i = 0; i < TM; ++i)
        for (int j = 0; j < TN; ++j)
          if (r0 + i * TY < rows_ && c0 + j * TX < cols_)
            d_[(r0 + i * TY) * ldd_ + c0 + j * TX] += tile[i][j];
    }
  }

  // Sub-tiles of width `sub` that cover min(left, tile) elements.
  KOKKOS_INLINE_FUNCTION static int sub_tiles(const index_t left, const int sub, const int tile) {
    return left >= tile ? tile / sub : int((left + sub - 1) / sub);
  }

  template <class BiasSums>
  KOKKOS_INLINE_FUNCTION void compute(const Member& team, const float* buf, const index_t m0,
                                      const index_t n0, float (&acc)[TM][TN], const bool bias_team,
                                      BiasSums& bsum) const {
    const float* const as = buf;
    const float* const bs = buf + a_floats;
    for_each_thread(team, [&](int ty, int tx) {
      if constexpr (one_subtile) {
        micro_kernel(acc, as + ty, bs + tx);
      } else {
        // A's panel (bk × sm) stays in L1 while B's panels stream past it,
        // and D is updated along its rows (sequential, prefetcher-friendly).
        // Sub-tiles wholly outside D are skipped (their scratch is zeros).
        const int si_end = sub_tiles(rows_ - m0, SM, BM), sj_end = sub_tiles(cols_ - n0, SN, BN);
        for (int si = 0; si < si_end; ++si) {
          for (int sj = 0; sj < sj_end; ++sj) {
            float tile[TM][TN];
            {
              float acc_chunk[TM][TN] = {};
              micro_kernel(acc_chunk, as + si * a_panel + ty, bs + sj * b_panel + tx);
              to_tile(acc_chunk, tile);
            }
            add_to_d(tile, m0 + si * SM + ty, n0 + sj * SN + tx);
          }
        }
      }
      if constexpr (FuseBias) {
        if (bias_team) sum_bias_rows(as, ty * TX + tx, bsum);
      }
    });
  }

  // FuseBias: bsum[p][u] += Σ_k As(k, row p·SM + tid + u·NT) for this chunk,
  // a float sum over the chunk added to a double per row.
  template <class BiasSums>
  KOKKOS_INLINE_FUNCTION static void sum_bias_rows(const float* as, const int tid,
                                                   BiasSums& bsum) {
    for (int p = 0; p < BM / SM; ++p) {
      float s[bias_rows] = {};
      for (int k = 0; k < BK; ++k)
        for (int u = 0; u < bias_rows; ++u)
          if (tid + u * NT < SM) s[u] += as[p * a_panel + k * a_ld + tid + u * NT];
      for (int u = 0; u < bias_rows; ++u) bsum[p][u] += s[u];
    }
  }

  template <class BiasSums>
  KOKKOS_INLINE_FUNCTION void write_bias(const Member& team, const index_t m0,
                                         const BiasSums& bsum) const {
    for_each_thread(team, [&](int ty, int tx) {
      const int tid = ty * TX + tx;
      for (int p = 0; p < BM / SM; ++p)
        for (int u = 0; u < bias_rows; ++u) {
          const index_t r = m0 + p * SM + tid + u * NT;
          if (tid + u * NT < SM && r < rows_) bias_[r] += float(bsum[p][u]);
        }
    });
  }
};

}  // namespace llmk::kernels
