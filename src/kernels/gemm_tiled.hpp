// A hierarchical Kokkos GEMM, the kernel of matmul's "tiled" implementation:
//
//   D (R × N) ⟵ op(A) · B,   B row-major K × N,
//   dinp    (M × C)  ⟵ (dout · weight) ⊙ gelu'(pre_gelu)   TransA = false: op(A)(r, k) = dout(r, k)
//   dweight (OC × C) ⟵ doutᵀ · inp                         TransA = true:  op(A)(r, k) = dout(k, r)
//
// "⟵" is += or = (overwrite: D is never read, it may hold NaN). A and B are
// float or bf16 (TIn), D float or bf16 (TD). Sums are float; the epilogue,
// applied once to each element's whole sum as it is written, multiplies by
// GELU's derivative (with_gelu), adds to or replaces D and rounds once into
// TD (kernels::update).
//
// A team computes a bm × bn tile of D. It walks K in chunks of bk: the team
// stages the chunk of op(A) (bm × bk) and of B (bk × bn) in team scratch as
// float (bf16 is widened there), zero-filled outside the matrices, then each
// thread multiplies them into a register micro-tile with constant-trip loops
// the compilers unroll (FMAs on registers). Tile sizes, thread grid and
// scratch layout come from TiledTuning<ExecSpace> (tuning.hpp); this file has
// no backend #ifdefs.
//
// Thread (ty, tx) of the team_size × vector_length grid owns, within a
// sub-tile of sm = tm·team_size rows × sn = tn·vector_length columns, the rows
// ty + i·team_size and the columns tx + j·vector_length. On a GPU the sub-tile
// is the whole tile: a warp's scratch reads are broadcasts (same row) or
// consecutive words (distinct banks), its global writes are coalesced, and the
// micro-tile stays in registers over all of K: the epilogue runs once, at the
// end. On a host (1 × 1 grid) the micro-tile is contiguous (4 × 24 floats: 12
// AVX2 registers) and the thread sweeps the tile's many sub-tiles per chunk,
// so each chunk's products must be added somewhere that outlives the chunk:
//  - into D itself when D is float and there is no GELU (= at the first chunk
//    when overwriting, += after): no extra memory, as fast as before;
//  - otherwise into a float tile of sums in team scratch (bm × bn, after the
//    staged chunks; host scratch is ordinary memory, in cache as D's tile was),
//    and the last chunk's products go, with those sums, through the epilogue
//    into D: a bf16 D is rounded once, not once per chunk, and GELU's factor
//    multiplies the whole sum. No extra pass over D.
//
// Scratch layout: op(A) as [bm/sm panels][bk][sm + a_pad] (transposed, so a
// thread's micro-kernel reads its rows at one k from one scratch row), B as
// [bn/sn panels][bk][sn], then (host, when needed) the sums as
// [bm/sm][bn/sn][thread][tm][tn] (a sub-tile's sums contiguous: the sweep
// reads them in order). On a host a panel is exactly what one micro-kernel
// reads, a contiguous block that stays in L1. On a GPU there is one panel, and
// a_pad keeps the transposing stores of the non-transposed A free of bank
// conflicts.
//
// Deterministic: every output element is computed by one thread, in a fixed
// order; no atomics.
#pragma once

#include <kernels/gelu.hpp>
#include <kernels/tuning.hpp>
#include <kernels/update.hpp>
#include <llmk/types.hpp>

#include <cstdint>
#include <type_traits>
#include <utility>

namespace llmk::kernels {

template <bool TransA, bool FuseBias, class ExecSpace, class TIn = float, class TD = float,
          class TBias = float, class Tuning = TiledTuning<ExecSpace>>
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
  static constexpr int sum_floats = BM * BN;  // the host's tile of sums, when D cannot hold them
  static constexpr int align = 16;            // floats: 64 bytes, a cache line
  // One sub-tile per thread (GPU): acc lives in registers across all K chunks.
  static constexpr bool one_subtile = SM == BM && SN == BN;
  // GELU's backward belongs to dinp, the non-transposed product; the dweight
  // kernels are compiled without its code. (nvcc 13, sm_90, 128 registers:
  // with it the fused-bias kernel spilled 28 bytes; without it no kernel
  // spills, all precisions. Before this epilogue: 8 bytes, fused-bias kernel.)
  static constexpr bool has_gelu = !TransA;
  // Rows of a bias panel each thread sums (FuseBias).
  static constexpr int bias_rows = (SM + NT - 1) / NT;

  static_assert(BM % SM == 0 && BN % SN == 0, "a tile must be whole sub-tiles");
  static_assert(std::is_same_v<TIn, float> || std::is_same_v<TIn, bf16>, "inputs: float or bf16");
  static_assert(std::is_same_v<TD, float> || std::is_same_v<TD, bf16>, "D: float or bf16");

  // D ⟵ op(A)·B: = when overwrite (D is never read), += otherwise.
  TiledGemm(const Matrix<ExecSpace, TD>& D, const ConstMatrix<ExecSpace, TIn>& A,
            const ConstMatrix<ExecSpace, TIn>& B, const bool overwrite)
      : d_(D.data()),
        a_(A.data()),
        b_(B.data()),
        ldd_(D.extent(1)),
        lda_(A.extent(1)),
        ldb_(B.extent(1)),
        rows_(D.extent(0)),
        cols_(D.extent(1)),
        depth_(B.extent(0)),
        tiles_n_((cols_ + BN - 1) / BN),
        overwrite_(overwrite) {}

  // GELU's backward: D ⟵ (op(A)·B) ⊙ gelu'(pre_gelu), pre_gelu of D's
  // extents (empty: none).
  TiledGemm& with_gelu(const ConstMatrix<ExecSpace, TIn>& pre_gelu) {
    static_assert(has_gelu, "GELU's backward is fused into the dinp product");
    pre_ = pre_gelu.extent(0) != 0 ? pre_gelu.data() : nullptr;
    ldp_ = pre_gelu.extent(1);
    return *this;
  }

  // The bias fused into the dweight product (TransA: op(A) = doutᵀ, whose
  // rows are the output channels): dbias ⟵ Σ_k op(A)(r, k), = or +=.
  TiledGemm& with_bias(const Vector<ExecSpace, TBias>& dbias, const bool overwrite) {
    static_assert(FuseBias && TransA, "the bias is fused into the dweight product");
    bias_ = dbias.data();
    overwrite_bias_ = overwrite;
    return *this;
  }

  void run(const ExecSpace& exec, const char* label) const {
    const index_t tiles_m = (rows_ + BM - 1) / BM;
    Policy policy(exec, tiles_m * tiles_n_, TY, TX);
    policy = policy.set_scratch_size(Tuning::scratch_level, Kokkos::PerTeam(scratch_bytes()));
    Kokkos::parallel_for(label, policy, *this);
  }

  size_t scratch_bytes() const { return Scratch::shmem_size(scratch_floats()); }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    const index_t m0 = team.league_rank() / tiles_n_ * BM;
    const index_t n0 = team.league_rank() % tiles_n_ * BN;
    const bool bias_team = FuseBias && n0 == 0;  // sees every op(A) element of its rows once
    const int level = Tuning::scratch_level;  // (a copy: team_scratch takes a reference)
    const Scratch scratch(team.team_scratch(level), scratch_floats());
    float* const buf = aligned(scratch.data());

    float acc[TM][TN] = {};  // one_subtile: the thread's sums over all of K
    double bsum[FuseBias ? BM / SM : 1][bias_rows] = {};  // FuseBias: the thread's bias rows
    for (index_t k0 = 0; k0 < depth_; k0 += BK) {
      stage(team, buf, k0, m0, n0);
      team.team_barrier();
      compute(team, buf, m0, n0, Chunk{k0 == 0, k0 + BK >= depth_}, acc, bias_team, bsum);
      team.team_barrier();  // buf is restaged next
    }
    if constexpr (one_subtile) {
      for_each_thread(team, [&](int ty, int tx) {
        float tile[TM][TN];
        to_tile(acc, tile);
        write_d(tile, m0 + ty, n0 + tx);
      });
    }
    if (bias_team) write_bias(team, m0, bsum);
  }

 private:
  TD* d_;
  const TIn* a_;
  const TIn* b_;
  const TIn* pre_ = nullptr;  // with_gelu
  TBias* bias_ = nullptr;     // with_bias
  index_t ldd_, lda_, ldb_, ldp_ = 0;
  index_t rows_, cols_, depth_;  // R, N, K
  index_t tiles_n_;
  bool overwrite_, overwrite_bias_ = false;

  // Where a K chunk is: the first writes the host's running sums, the last
  // finishes them.
  struct Chunk {
    bool first, last;
  };

  // Host: whether the running sums over K chunks live in D itself (float, no
  // GELU factor still to apply) rather than in the scratch tile of sums.
  KOKKOS_INLINE_FUNCTION bool sums_in_d() const {
    return std::is_same_v<TD, float> && pre_ == nullptr;
  }
  KOKKOS_INLINE_FUNCTION bool sums_in_scratch() const { return !one_subtile && !sums_in_d(); }
  KOKKOS_INLINE_FUNCTION int scratch_floats() const {
    return a_floats + b_floats + (sums_in_scratch() ? sum_floats : 0) + align;  // + room to align
  }

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

  // op(A)(r, k) and B(k, n) as float; 0 outside the matrices unless Inside
  // says the whole chunk is inside (then there are no bounds checks and the
  // host's copy loops vectorize, bf16 widening included).
  template <bool Inside>
  KOKKOS_INLINE_FUNCTION float a_at(const index_t r, const index_t k) const {
    if (!Inside && (r >= rows_ || k >= depth_)) return 0.0f;
    return to_float(TransA ? a_[k * lda_ + r] : a_[r * lda_ + k]);
  }
  template <bool Inside>
  KOKKOS_INLINE_FUNCTION float b_at(const index_t k, const index_t n) const {
    if (!Inside && (k >= depth_ || n >= cols_)) return 0.0f;
    return to_float(b_[k * ldb_ + n]);
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

  // f(i) for i = 0 .. TM − 1, unrolled by the compiler whatever f's size (a
  // fold over a parameter pack): rows of a micro-tile then have constant
  // indices, which nvcc needs to keep them in registers. (A plain loop around
  // the GELU epilogue was not unrolled by nvcc, and its tiles went to local
  // memory.) The loops along a row are left to the compilers: GCC vectorizes
  // them.
  template <class F, int... I>
  KOKKOS_INLINE_FUNCTION static void for_each_row(const F& f, std::integer_sequence<int, I...>) {
    (f(I), ...);
  }
  template <class F>
  KOKKOS_INLINE_FUNCTION static void for_each_row(const F& f) {
    for_each_row(f, std::make_integer_sequence<int, TM>{});
  }

  // f(D(r, c), tile[i][j], r, c) for the micro-tile's elements at
  // r = r0 + i·TY, c = c0 + j·TX that lie within D.
  template <class F>
  KOKKOS_INLINE_FUNCTION void for_each_in_d(const float (&tile)[TM][TN], const index_t r0,
                                            const index_t c0, const F& f) const {
    const bool inside = r0 + (TM - 1) * TY < rows_ && c0 + (TN - 1) * TX < cols_;
    for_each_row([&](const int i) {
      const index_t r = r0 + i * TY;
      TD* const row = d_ + r * ldd_ + c0;
      if (inside) {  // (no bounds checks: GCC vectorizes the row)
        for (int j = 0; j < TN; ++j) f(row[j * TX], tile[i][j], r, c0 + j * TX);
      } else if (r < rows_) {
        for (int j = 0; j < TN; ++j)
          if (c0 + j * TX < cols_) f(row[j * TX], tile[i][j], r, c0 + j * TX);
      }
    });
  }

  // The epilogue: D ⟵ tile ⊙ gelu'(pre_gelu), from whole sums over K.
  KOKKOS_INLINE_FUNCTION void write_d(const float (&tile)[TM][TN], const index_t r0,
                                      const index_t c0) const {
    for_each_in_d(tile, r0, c0, [&](TD& d, float v, const index_t r, const index_t c) {
      if constexpr (has_gelu) {
        if (pre_) v *= gelu_grad(to_float(pre_[r * ldp_ + c]));
      }
      update(d, v, overwrite_);
    });
  }

  // Host, sums_in_d(): D ⟵ one chunk's products (= when overwriting D at the
  // first chunk, += otherwise).
  KOKKOS_INLINE_FUNCTION void add_to_d(const float (&tile)[TM][TN], const index_t r0,
                                       const index_t c0, const bool store) const {
    if constexpr (std::is_same_v<TD, float>) {
      if (store) {
        for_each_in_d(tile, r0, c0, [](float& d, float v, index_t, index_t) { d = v; });
      } else {
        for_each_in_d(tile, r0, c0, [](float& d, float v, index_t, index_t) { d += v; });
      }
    }
  }

  // Host: a chunk's products of one micro-tile, `sums` its running sums in
  // scratch (sums_in_scratch()).
  KOKKOS_INLINE_FUNCTION void add_chunk(float (&tile)[TM][TN], const index_t r0, const index_t c0,
                                        float* const sums, const Chunk chunk) const {
    if (sums_in_d()) {
      add_to_d(tile, r0, c0, chunk.first && overwrite_);
    } else if (!chunk.last) {
      if (chunk.first) {
        LLMK_UNROLL for (int i = 0; i < TM; ++i)
          for (int j = 0; j < TN; ++j) sums[i * TN + j] = tile[i][j];
      } else {
        LLMK_UNROLL for (int i = 0; i < TM; ++i)
          for (int j = 0; j < TN; ++j) sums[i * TN + j] += tile[i][j];
      }
    } else {
      if (!chunk.first) {
        LLMK_UNROLL for (int i = 0; i < TM; ++i)
          for (int j = 0; j < TN; ++j) tile[i][j] += sums[i * TN + j];
      }
      write_d(tile, r0, c0);
    }
  }

  // Sub-tiles of width `sub` that cover min(left, tile) elements.
  KOKKOS_INLINE_FUNCTION static int sub_tiles(const index_t left, const int sub, const int tile) {
    return left >= tile ? tile / sub : int((left + sub - 1) / sub);
  }

  template <class BiasSums>
  KOKKOS_INLINE_FUNCTION void compute(const Member& team, float* buf, const index_t m0,
                                      const index_t n0, const Chunk chunk, float (&acc)[TM][TN],
                                      const bool bias_team, BiasSums& bsum) const {
    const float* const as = buf;
    const float* const bs = buf + a_floats;
    for_each_thread(team, [&](int ty, int tx) {
      if constexpr (one_subtile) {
        micro_kernel(acc, as + ty, bs + tx);
      } else {
        // A's panel (bk × sm) stays in L1 while B's panels stream past it,
        // and D (or the sums) is updated along its rows (sequential,
        // prefetcher-friendly). Sub-tiles wholly outside D are skipped
        // (their scratch is zeros).
        float* const sums = buf + a_floats + b_floats + (ty * TX + tx) * TM * TN;
        const int si_end = sub_tiles(rows_ - m0, SM, BM), sj_end = sub_tiles(cols_ - n0, SN, BN);
        for (int si = 0; si < si_end; ++si) {
          for (int sj = 0; sj < sj_end; ++sj) {
            float tile[TM][TN];
            {
              float acc_chunk[TM][TN] = {};
              micro_kernel(acc_chunk, as + si * a_panel + ty, bs + sj * b_panel + tx);
              to_tile(acc_chunk, tile);
            }
            add_chunk(tile, m0 + si * SM + ty, n0 + sj * SN + tx,
                      sums + (si * (BN / SN) + sj) * NT * TM * TN, chunk);
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
          if (tid + u * NT < SM && r < rows_) update(bias_[r], float(bsum[p][u]), overwrite_bias_);
        }
    });
  }
};

}  // namespace llmk::kernels
