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
// (FMAs on registers). Tile sizes, thread grid, scratch layout and staging
// come from TiledTuning<ExecSpace> (tuning.hpp); this file has no backend
// #ifdefs (kernels/async_copy.hpp holds the one asynchronous-copy primitive).
//
// Thread (ty, tx) of the team_size × vector_length grid owns, within a
// sub-tile of sm = tm·team_size rows × sn = tn·vector_length columns, the rows
// ty·tm + i (contiguous) and the columns tx·vec + col(j): groups of vec
// consecutive columns, vec·vector_length apart. Two structures:
//  - Register tiles (one_subtile: the GPU's). The sub-tile is the whole tile
//    and the micro-tile stays in registers over the team's K range; the
//    epilogue runs once. With vec = 4 a thread reads its A values and B
//    values from scratch in 16-byte packs (A's as broadcasts within a warp).
//    Chunks cycle through `stages` scratch buffers: with two, a thread's share
//    of chunk c + 1 is loaded into registers before the FMAs of chunk c and
//    stored after them, or copied by AsyncCopy (async_a, async_b), so one
//    barrier per chunk and the loads' latency behind the FMAs. K may be split
//    (split_k) into ranges by a wave model (wave_split_plan); the ranges'
//    float partials go to the workspace and a second pass (SplitReduce) adds
//    them in range order and applies the epilogue.
//  - Sub-tiles (the host's: a 1 × 1 grid). The micro-tile (4 × 24 floats: 12
//    AVX2 registers) sweeps the tile's many sub-tiles per chunk, so each
//    chunk's products must be added somewhere that outlives the chunk:
//     - into D itself when D is float and there is no GELU (= at the first
//       chunk when overwriting, += after): no extra memory;
//     - otherwise into a float tile of sums in team scratch (bm × bn, after the
//       staged chunk; host scratch is ordinary memory, in cache as D's tile
//       was), and the last chunk's products go, with those sums, through the
//       epilogue into D: a bf16 D is rounded once, not once per chunk, and
//       GELU's factor multiplies the whole sum. No extra pass over D.
//    Two more host paths (TiledTuning's exact_k and split_k):
//     - exact_k: a team stages and multiplies only the k of a chunk within K
//       and the sub-tiles that cover D (run-time bounds): at M = 64 dweight's
//       K = 64 filled half of a 128-deep chunk with zeros multiplied too.
//     - split_k: a product with fewer tiles than threads (dinp at M = 64 and
//       C = 768 is one tile) splits K into ranges of whole chunks; the team of
//       (range, tile) sums into a float partial tile in the call's workspace
//       (no epilogue), then a second pass (SplitSum) adds the ranges'
//       partials in range order and applies the epilogue once (GELU's factor,
//       = or +=, one rounding); a fused dbias goes through double partials
//       likewise.
//
// Scratch layout: op(A) as [bm/sm panels][bk][sm + a_pad] (transposed, so a
// thread's micro-kernel reads its rows at one k from one scratch row), B as
// [bn/sn panels][bk][sn], times `stages`, then (host, when needed) the sums as
// [bm/sm][bn/sn][thread][tm][tn] (a sub-tile's sums contiguous: the sweep
// reads them in order). On a host a panel is exactly what one micro-kernel
// reads, a contiguous block that stays in L1. On a GPU there is one panel.
//
// Deterministic: every output element is computed by one thread, in a fixed
// order; no atomics. Split-K's ranges follow the plan: on a host the thread
// count, on a GPU its SM count; runs with the same plan are bitwise identical.
#pragma once

#include <kernels/async_copy.hpp>
#include <kernels/gelu.hpp>
#include <kernels/tuning.hpp>
#include <kernels/update.hpp>
#include <llmk/types.hpp>

#include <algorithm>
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
  static constexpr int V = Tuning::vec;  // a thread's columns come in groups of V
  static constexpr int a_ld = SM + Tuning::a_pad;   // floats from k to k + 1 in an A panel
  static constexpr int a_panel = BK * a_ld, b_panel = BK * SN;
  static constexpr int a_floats = BM / SM * a_panel, b_floats = BN / SN * b_panel;
  static constexpr int stage_floats = a_floats + b_floats;  // one chunk's scratch buffer
  static constexpr int sum_floats = BM * BN;  // the host's tile of sums, when D cannot hold them
  static constexpr int align = 16;            // floats: 64 bytes, a cache line
  // One sub-tile per thread (GPU): acc lives in registers across all K chunks.
  static constexpr bool one_subtile = SM == BM && SN == BN;
  // GELU's backward belongs to dinp, the non-transposed product; the dweight
  // kernels are compiled without its code. (nvcc 13, sm_90, 128 registers:
  // with it the fused-bias kernel spilled 28 bytes; without it no kernel
  // spills, all precisions. Before this epilogue: 8 bytes, fused-bias kernel.)
  static constexpr bool has_gelu = !TransA;
  // Register tiles with float inputs may stage an operand through AsyncCopy
  // (two buffers); bf16 is widened on the way, through registers.
  static constexpr bool async_a =
      Tuning::template async_a<TransA> && std::is_same_v<TIn, float>;
  static constexpr bool async_b =
      Tuning::template async_b<TransA> && std::is_same_v<TIn, float>;
  // Rows of a bias panel each thread sums (FuseBias).
  static constexpr int bias_rows = (SM + NT - 1) / NT;

  static_assert(BM % SM == 0 && BN % SN == 0, "a tile must be whole sub-tiles");
  static_assert(TN % V == 0 && (V == 1 || (TM % V == 0 && a_ld % V == 0 && one_subtile)),
                "pack loads (vec > 1) are for register tiles of whole packs");
  static_assert(one_subtile || (NT == 1 && Tuning::stages == 1),
                "several sub-tiles per thread are for hosts: one thread per team, one buffer");
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
        tiles_m_((rows_ + BM - 1) / BM),
        tiles_n_((cols_ + BN - 1) / BN),
        ldw_((cols_ + V - 1) / V * V),
        split_{1, depth_},
        overwrite_(overwrite),
        packed_a_(whole_packs(A.data(), lda_)),
        packed_b_(whole_packs(B.data(), ldb_)) {}

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

  // Host (split_k): the floats of workspace with_split_k takes, at most, for
  // any R' ≤ R rows and K' ≤ K (a call's row chunks share one workspace,
  // sized for the largest; the split count is not monotonic in either).
  // Register tiles: exactly what the plan for these sizes takes.
  static std::size_t split_k_workspace(const index_t R, const index_t N, const index_t K,
                                       const bool bias) {
    if constexpr (!Tuning::split_k) {
      return 0;
    } else if constexpr (one_subtile) {
      const Split plan = wave_split_plan(R, N, K);
      if (plan.count == 1) return 0;
      const std::size_t ldw = (N + V - 1) / V * V, tiles_m = (R + BM - 1) / BM;
      return std::size_t(plan.count) * (R * ldw + (bias ? tiles_m * BM * 2 : 0));
    } else {
      const index_t tiles_n = (N + BN - 1) / BN, chunks = (K + BK - 1) / BK;
      const index_t threads = Tuning::resident_teams();  // (a host: its threads)
      std::size_t most = 0;
      for (index_t t = 1; t <= (R + BM - 1) / BM && t * tiles_n < threads; ++t) {
        const index_t tiles = t * tiles_n;
        const index_t ranges = std::min((threads + tiles - 1) / tiles, chunks);  // ≥ the plan's
        if (ranges < 2) continue;
        const std::size_t floats = std::size_t(ranges) * tiles * (BM * BN) +
                                   (bias ? std::size_t(ranges) * t * BM * 2 : 0);  // (doubles)
        most = std::max(most, floats);
      }
      return most;
    }
  }

  // split_k: splits K by the plan (host: split_plan, when the tiles are
  // fewer than the threads; register tiles: wave_split_plan), its partial
  // sums in `workspace` (split_k_workspace floats, 16-byte aligned); with one
  // range nothing changes.
  TiledGemm& with_split_k(float* workspace) {
    if constexpr (Tuning::split_k) {
      if constexpr (one_subtile) {
        split_ = wave_split_plan(rows_, cols_, depth_);
      } else {
        split_ = split_plan(rows_, cols_, depth_);
      }
      if (split_.count > 1 && FuseBias) {
        bias_partial_ = reinterpret_cast<double*>(workspace);  // first: 8-byte aligned
        partial_ = workspace + split_.count * tiles_m_ * BM * 2;
      } else if (split_.count > 1) {
        partial_ = workspace;
      }
    }
    return *this;
  }

  void run(const ExecSpace& exec, const char* label) const {
    const index_t tiles_m = (rows_ + BM - 1) / BM;
    Policy policy(exec, tiles_m * tiles_n_ * split_.count, TY, TX);
    policy = policy.set_scratch_size(Tuning::scratch_level, Kokkos::PerTeam(scratch_bytes()));
    Kokkos::parallel_for(label, policy, *this);
    if constexpr (Tuning::split_k && one_subtile) {
      if (split_.count > 1) {
        Kokkos::parallel_for(std::string(label) + "_split_reduce",
                             Kokkos::RangePolicy<ExecSpace, SplitReduce, Kokkos::IndexType<index_t>>(
                                 exec, 0, rows_ * (ldw_ / V)),
                             *this);
      }
    } else if constexpr (Tuning::split_k) {
      if (split_.count > 1) {
        const index_t subtiles = tiles_m * tiles_n_ * (BM / SM) * (BN / SN);
        Kokkos::parallel_for(std::string(label) + "_split_sum",
                             Kokkos::RangePolicy<ExecSpace, SplitSum, Kokkos::IndexType<index_t>>(
                                 exec, 0, subtiles),
                             *this);
      }
    }
  }

  size_t scratch_bytes() const { return Scratch::shmem_size(scratch_floats()); }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    if constexpr (one_subtile) {
      register_team(team);
    } else {
      host_team(team);
    }
  }

  // Register tiles (split_k): the second pass, V columns of a row of D per
  // index: adds the ranges' partial sums in range order, then the epilogue
  // (GELU's factor on the whole sum, = or +=, one rounding); dbias likewise
  // from its double partials, by the index of the row's first columns.
  struct SplitReduce {};
  KOKKOS_INLINE_FUNCTION void operator()(SplitReduce, const index_t i) const {
    const index_t r = i / (ldw_ / V), c = i % (ldw_ / V) * V;
    const float* sums = partial_ + r * ldw_ + c;
    float v[V];
    load_floats(v, sums);
    for (index_t s = 1; s < split_.count; ++s) {
      float more[V];
      load_floats(more, sums + s * rows_ * ldw_);
      for (int u = 0; u < V; ++u) v[u] += more[u];
    }
    for (int u = 0; u < V && c + u < cols_; ++u) finish(d_[r * ldd_ + c + u], v[u], r, c + u);
    if constexpr (FuseBias) {
      if (bias_ == nullptr || c != 0) return;
      double sum = 0;
      for (index_t s = 0; s < split_.count; ++s) sum += bias_partial_[s * tiles_m_ * BM + r];
      update(bias_[r], float(sum), overwrite_bias_);
    }
  }

  // Host (split_k): the second pass, one micro-tile of D per index: adds the
  // ranges' partial sums in range order, then the epilogue (write_d: GELU's
  // factor on the whole sum, one rounding); dbias likewise from its doubles.
  struct SplitSum {};
  KOKKOS_INLINE_FUNCTION void operator()(SplitSum, const index_t i) const {
    static_assert(NT == 1, "split-K is for hosts: one thread per team");
    constexpr int per_tile = BM / SM * (BN / SN);
    const index_t tile = i / per_tile, si = i % per_tile / (BN / SN), sj = i % (BN / SN);
    const index_t r0 = tile / tiles_n_ * BM + si * SM, c0 = tile % tiles_n_ * BN + sj * SN;
    if (r0 >= rows_ || c0 >= cols_) return;
    const index_t tiles = tiles_m_ * tiles_n_;
    const float* sums = partial_ + tile * (BM * BN) + (si * (BN / SN) + sj) * (TM * TN);
    float tile_sums[TM][TN];
    LLMK_UNROLL for (int a = 0; a < TM; ++a)
      for (int b = 0; b < TN; ++b) tile_sums[a][b] = sums[a * TN + b];
    for (index_t s = 1; s < split_.count; ++s) {
      sums += tiles * (BM * BN);
      LLMK_UNROLL for (int a = 0; a < TM; ++a)
        for (int b = 0; b < TN; ++b) tile_sums[a][b] += sums[a * TN + b];
    }
    write_d(tile_sums, r0, c0);
    if constexpr (FuseBias) {
      if (bias_ == nullptr || c0 != 0) return;
      for (int a = 0; a < TM && r0 + a < rows_; ++a) {
        double sum = 0;
        for (index_t s = 0; s < split_.count; ++s) sum += bias_partial_[s * tiles_m_ * BM + r0 + a];
        update(bias_[r0 + a], float(sum), overwrite_bias_);
      }
    }
  }

 private:
  TD* d_;
  const TIn* a_;
  const TIn* b_;
  const TIn* pre_ = nullptr;  // with_gelu
  TBias* bias_ = nullptr;     // with_bias
  index_t ldd_, lda_, ldb_, ldp_ = 0;
  index_t rows_, cols_, depth_;  // R, N, K
  index_t tiles_m_, tiles_n_;
  index_t ldw_;  // register tiles' split-K: a partial sum's row stride (N rounded up to V)
  // split_k: K in `count` ranges of `span` (whole chunks); where their
  // partial sums go is below (partial_, bias_partial_).
  struct Split {
    index_t count, span;
  } split_;
  // Split-K's partial sums: on a host per (range, tile) a BM × BN float tile
  // laid out as the scratch sums; with register tiles per range an R × ldw_
  // row-major matrix. Both: per (range, row) a double bias sum.
  float* partial_ = nullptr;
  double* bias_partial_ = nullptr;
  bool overwrite_, overwrite_bias_ = false;
  // Register tiles: whether A's and B's rows can be loaded in packs of V
  // (aligned start, row length a multiple of V).
  bool packed_a_, packed_b_;

  // V elements of TIn loaded at once (8 or 16 bytes on a GPU), and V floats.
  struct alignas(V * sizeof(TIn)) InPack {
    TIn v[V];
  };
  struct alignas(V * sizeof(float)) FloatPack {
    float v[V];
  };

  static bool whole_packs(const TIn* data, const index_t ld) {
    return V > 1 && reinterpret_cast<std::uintptr_t>(data) % sizeof(InPack) == 0 && ld % V == 0;
  }
  // dst[u] = src[u], u < V, in one load where V > 1 (src aligned to V floats).
  KOKKOS_INLINE_FUNCTION static void load_floats(float* dst, const float* src) {
    const FloatPack p = *reinterpret_cast<const FloatPack*>(src);
    for (int u = 0; u < V; ++u) dst[u] = p.v[u];
  }
  KOKKOS_INLINE_FUNCTION static void store_floats(float* dst, const float* src) {
    FloatPack p;
    for (int u = 0; u < V; ++u) p.v[u] = src[u];
    *reinterpret_cast<FloatPack*>(dst) = p;
  }

  // Where a K chunk is: the first writes the host's running sums, the last
  // finishes them.
  // Host (exact_k) also: its depth (fewer than BK at K's end), how many A
  // panels cover op(A)'s rows, and the team's partial tile when K is split.
  struct Chunk {
    bool first, last;
    int depth = BK;
    int a_panels = BM / SM;
    float* partial = nullptr;
  };

  // Host: whether the running sums over K chunks live in D itself (float, no
  // GELU factor still to apply) rather than in the scratch tile of sums.
  KOKKOS_INLINE_FUNCTION bool sums_in_d() const {
    return std::is_same_v<TD, float> && pre_ == nullptr;
  }
  KOKKOS_INLINE_FUNCTION bool sums_in_scratch() const {
    return !one_subtile && !sums_in_d() && split_.count == 1;
  }
  KOKKOS_INLINE_FUNCTION int scratch_floats() const {
    return Tuning::stages * stage_floats + (sums_in_scratch() ? sum_floats : 0) +
           align;  // + room to align
  }

  // Host (split_k): when the tiles are fewer than the threads, K in
  // ceil(threads / tiles) ranges of whole chunks (fewer if K has fewer
  // chunks), so that every thread has a team; else one range, all of K.
  static Split split_plan(const index_t R, const index_t N, const index_t K) {
    const index_t tiles = (R + BM - 1) / BM * ((N + BN - 1) / BN), chunks = (K + BK - 1) / BK;
    const index_t threads = Tuning::resident_teams();  // (a host: its threads)
    if (tiles >= threads || chunks < 2) return {1, K};
    const index_t wanted = (threads + tiles - 1) / tiles;
    const index_t per_range = (chunks + wanted - 1) / wanted;  // chunks
    return {(chunks + per_range - 1) / per_range, per_range * BK};
  }

  // Where team `league_rank` works: its tile (m0, n0 its first row and
  // column of D) and its K range [k_begin, k_end) (all of K unless split).
  struct Place {
    index_t tile, range, m0, n0, k_begin, k_end;
  };
  KOKKOS_INLINE_FUNCTION Place place_of(const index_t league_rank) const {
    const index_t tiles = tiles_m_ * tiles_n_;
    const index_t tile = league_rank % tiles, range = league_rank / tiles;
    const index_t k_begin = range * split_.span;
    const index_t k_end = depth_ - k_begin < split_.span ? depth_ : k_begin + split_.span;
    return {tile, range, tile / tiles_n_ * BM, tile % tiles_n_ * BN, k_begin, k_end};
  }

  // Register tiles (split_k): K in the ranges of whole chunks that finish
  // soonest by a wave model. A processor runs resident_teams() teams at
  // once, so a league of T teams takes ⌈T / slots⌉ waves, each as long as a
  // team's chunks; split into s ranges a tile's teams are s times more and
  // each 1/s as long, and the partial sums cost their writes and second pass
  // ((2s + 1) R·N floats) at split_bytes_per_chunk a chunk's time. E.g. the
  // seed shape's dweight (144 tiles, 512 chunks, 264 slots on an H200):
  // unsplit 1 wave of 512 chunks; 11 ranges 6 waves of 47 chunks + ~20.
  static Split wave_split_plan(const index_t R, const index_t N, const index_t K) {
    const index_t tiles = (R + BM - 1) / BM * ((N + BN - 1) / BN), chunks = (K + BK - 1) / BK;
    const index_t slots = std::max<index_t>(1, Tuning::resident_teams());
    auto waves = [&](const index_t teams) { return double((teams + slots - 1) / slots); };
    Split best{1, K};
    double best_cost = waves(tiles) * double(chunks);
    const index_t most = std::min<index_t>(Tuning::max_split, chunks);
    for (index_t s = 2; s <= most && tiles * s <= INT32_MAX; ++s) {  // (Kokkos 3: an int league)
      const index_t per_range = (chunks + s - 1) / s;
      if ((chunks + per_range - 1) / per_range != s) continue;  // the same ranges as fewer
      const double bytes = double(2 * s + 1) * double(R) * double(N) * sizeof(float);
      const double cost =
          waves(tiles * s) * double(per_range) + bytes / Tuning::split_bytes_per_chunk;
      if (cost < best_cost) {
        best = {s, per_range * BK};
        best_cost = cost;
      }
    }
    return best;
  }

  // Register tiles (GPU): the team's tile over its K range (all of K, or one
  // of split_.count). Chunk c's scratch buffer is buf + (c % stages) ·
  // stage_floats; with two, a thread loads its share of chunk c + 1 into
  // registers before the FMAs of chunk c and stores it after them: one
  // barrier per chunk, the loads' latency behind the FMAs.
  KOKKOS_INLINE_FUNCTION void register_team(const Member& team) const {
    constexpr int stages = Tuning::stages;
    static_assert(stages == 1 || stages == 2, "one or two scratch buffers");
    const Place place = place_of(team.league_rank());
    const index_t range = place.range, m0 = place.m0, n0 = place.n0;
    const index_t k_begin = place.k_begin, k_end = place.k_end;
    const bool bias_team = FuseBias && n0 == 0;  // sees every op(A) element of its rows once
    const int level = Tuning::scratch_level;  // (a copy: team_scratch takes a reference)
    const Scratch scratch(team.team_scratch(level), scratch_floats());
    float* const buf = aligned(scratch.data());

    float acc[TM][TN] = {};  // the thread's sums over its K range
    double bsum[FuseBias ? BM / SM : 1][bias_rows] = {};  // FuseBias: the thread's bias rows
    // Chunk c + 1 goes into the other buffer while chunk c is multiplied:
    // through registers (A's share loaded before the first half of the k and
    // stored after it, B's likewise around the second half) or, for the
    // operands async_a / async_b name, copied by AsyncCopy; a thread waits
    // for its own copies before the barrier that ends the chunk.
    Fetched next;  // the thread's share of a chunk, in registers
    for_each_thread(team, [&](int ty, int tx) {
      const int tid = ty * TX + tx;
      if constexpr (async_a) {
        copy_a_async(tid, k_begin, m0, buf);
      } else {
        fetch_a(next, tid, k_begin, m0);
        store_a(next, tid, buf);
      }
      if constexpr (async_b) {
        copy_b_async(tid, k_begin, n0, buf);
      } else {
        fetch_b(next, tid, k_begin, n0);
        store_b(next, tid, buf);
      }
    });
    if constexpr (async_a || async_b) AsyncCopy::wait_all();
    team.team_barrier();
    index_t c = 0;
    for (index_t k0 = k_begin; k0 < k_end; k0 += BK, ++c) {
      const float* const cur = buf + (c % stages) * stage_floats;
      float* const other = buf + ((c + 1) % stages) * stage_floats;
      const bool more = k0 + BK < k_end;
      for_each_thread(team, [&](int ty, int tx) {
        const int tid = ty * TX + tx;
        const float* const a = cur + ty * TM;
        const float* const b = cur + a_floats + tx * V;
        constexpr int half = BK / 2;
        if (stages == 2 && more) {
          if constexpr (async_a) {
            copy_a_async(tid, k0 + BK, m0, other);
          } else {
            fetch_a(next, tid, k0 + BK, m0);
          }
          if constexpr (async_b) copy_b_async(tid, k0 + BK, n0, other);
        }
        micro_kernel(acc, a, b, half);
        if (stages == 2 && more) {
          if constexpr (!async_a) store_a(next, tid, other);
          if constexpr (!async_b) fetch_b(next, tid, k0 + BK, n0);
        }
        micro_kernel(acc, a + half * a_ld, b + half * SN, half);
        if constexpr (FuseBias) {
          if (bias_team) sum_bias_rows(cur, tid, bsum);
        }
        if constexpr (!async_b) {
          if (stages == 2 && more) store_b(next, tid, other);
        }
      });
      if constexpr (async_a || async_b) AsyncCopy::wait_all();
      team.team_barrier();
      if (stages == 1 && more) {
        for_each_thread(team, [&](int ty, int tx) {
          fetch(next, ty * TX + tx, k0 + BK, m0, n0);
          store(next, ty * TX + tx, other);
        });
        team.team_barrier();
      }
    }
    finish_team(team, acc, bsum, range, m0, n0, bias_team);
  }

  // Register tiles: the micro-tiles' sums into D (or the range's partials)
  // and the bias rows' sums into dbias (or theirs).
  template <class BiasSums>
  KOKKOS_INLINE_FUNCTION void finish_team(const Member& team, const float (&acc)[TM][TN],
                                          const BiasSums& bsum, const index_t range,
                                          const index_t m0, const index_t n0,
                                          const bool bias_team) const {
    for_each_thread(team, [&](int ty, int tx) {
      float sums[TM][TN];
      to_tile(acc, sums);
      if (split_.count > 1) {
        write_partial(sums, range, m0 + ty * TM, n0 + tx * V);
      } else {
        write_d(sums, m0 + ty * TM, n0 + tx * V);
      }
    });
    if (bias_team) write_bias(team, m0, bsum, range);
  }

  // Register tiles, async_a / async_b: the thread's share of chunk k0 of
  // op(A) or B copied into `buf` by AsyncCopy, 16 bytes where the rows allow
  // (aligned, the chunk inside), else 4 with zeros outside the matrices; the
  // non-transposed A one float per k (transposed).
  KOKKOS_INLINE_FUNCTION void copy_a_async(const int tid, const index_t k0, const index_t m0,
                                           float* const buf) const {
    for_each_a_pack(tid, k0, m0, [&](int, int k, int r, const float* p, bool whole, auto in) {
      if (TransA && whole) {
        AsyncCopy::copy<16>(buf + k * a_ld + r, p, true);
      } else {
        for (int u = 0; u < V; ++u) {
          float* const dst = TransA ? buf + k * a_ld + r + u : buf + (k + u) * a_ld + r;
          AsyncCopy::copy<4>(dst, in(u) ? p + u : a_, in(u));
        }
      }
    });
  }

  KOKKOS_INLINE_FUNCTION void copy_b_async(const int tid, const index_t k0, const index_t n0,
                                           float* const buf) const {
    float* const bs = buf + a_floats;
    for_each_b_pack(tid, k0, n0, [&](int, int k, int n, const float* p, bool whole, auto in) {
      if (whole) {
        AsyncCopy::copy<16>(bs + k * SN + n, p, true);
      } else {
        for (int u = 0; u < V; ++u) AsyncCopy::copy<4>(bs + k * SN + n + u, in(u) ? p + u : b_, in(u));
      }
    });
  }

  // ---- register tiles: a thread's share of a chunk, through registers -----
  // Element e = tid + q·NT of the chunk's packs: op(A)'s BM × BK and B's
  // BK × BN, each in packs of V along the matrix's contiguous dimension.
  static constexpr int a_packs = BM * BK / V / NT, b_packs = BK * BN / V / NT;
  struct Fetched {
    InPack a[a_packs > 0 ? a_packs : 1], b[b_packs > 0 ? b_packs : 1];
  };

  // Where pack e of op(A)'s chunk is: (k, r) of its first element; its V
  // elements run along r (TransA: A's rows are k) or along k.
  KOKKOS_INLINE_FUNCTION static void a_pack_at(const int e, int& k, int& r) {
    if constexpr (TransA) {
      k = e / (BM / V), r = e % (BM / V) * V;
    } else {
      r = e / (BK / V), k = e % (BK / V) * V;
    }
  }
  // Where pack e of B's chunk is: row k, first column n (along n).
  KOKKOS_INLINE_FUNCTION static void b_pack_at(const int e, int& k, int& n) {
    k = e / (BN / V), n = e % (BN / V) * V;
  }


  KOKKOS_INLINE_FUNCTION void fetch(Fetched& f, const int tid, const index_t k0, const index_t m0,
                                    const index_t n0) const {
    fetch_a(f, tid, k0, m0);
    fetch_b(f, tid, k0, n0);
  }
  KOKKOS_INLINE_FUNCTION static void store(const Fetched& f, const int tid, float* const buf) {
    store_a(f, tid, buf);
    store_b(f, tid, buf);
  }

  // f(q, k, r, p, whole, in) for the thread's packs q of op(A)'s chunk at k0
  // (rows from m0): (k, r) the place of its first element in the chunk, p
  // its address in A, whole: its V elements loadable at once (aligned rows,
  // the chunk inside the matrix), in(u): element u lies inside the matrix.
  template <class F>
  KOKKOS_INLINE_FUNCTION void for_each_a_pack(const int tid, const index_t k0, const index_t m0,
                                              const F& f) const {
    static_assert(a_packs * V * NT == BM * BK && b_packs * V * NT == BK * BN,
                  "the team's threads must split a chunk into whole packs");
    const bool whole = packed_a_ && k0 + BK <= depth_ && m0 + BM <= rows_;
    for (int q = 0; q < a_packs; ++q) {
      int k, r;
      a_pack_at(tid + q * NT, k, r);
      const index_t gk = k0 + k, gr = m0 + r;
      auto in = [&](const int u) {
        return whole || (TransA ? gk < depth_ && gr + u < rows_ : gr < rows_ && gk + u < depth_);
      };
      f(q, k, r, TransA ? a_ + gk * lda_ + gr : a_ + gr * lda_ + gk, whole, in);
    }
  }

  // f(q, k, n, p, whole, in) likewise for B's packs (rows k, columns n).
  template <class F>
  KOKKOS_INLINE_FUNCTION void for_each_b_pack(const int tid, const index_t k0, const index_t n0,
                                              const F& f) const {
    const bool whole = packed_b_ && k0 + BK <= depth_ && n0 + BN <= cols_;
    for (int q = 0; q < b_packs; ++q) {
      int k, n;
      b_pack_at(tid + q * NT, k, n);
      auto in = [&](const int u) { return whole || (k0 + k < depth_ && n0 + n + u < cols_); };
      f(q, k, n, b_ + (k0 + k) * ldb_ + n0 + n, whole, in);
    }
  }

  // A pack at p: one load when whole, else element by element, 0 outside.
  template <class Inside>
  KOKKOS_INLINE_FUNCTION static void load_pack(InPack& dst, const TIn* p, const bool whole,
                                               const Inside& in) {
    if (whole) {
      dst = *reinterpret_cast<const InPack*>(p);
    } else {
      for (int u = 0; u < V; ++u) dst.v[u] = in(u) ? p[u] : TIn(0.0f);
    }
  }

  KOKKOS_INLINE_FUNCTION void fetch_a(Fetched& f, const int tid, const index_t k0,
                                      const index_t m0) const {
    for_each_a_pack(tid, k0, m0, [&](int q, int, int, const TIn* p, bool whole, auto in) {
      load_pack(f.a[q], p, whole, in);
    });
  }

  KOKKOS_INLINE_FUNCTION void fetch_b(Fetched& f, const int tid, const index_t k0,
                                      const index_t n0) const {
    for_each_b_pack(tid, k0, n0, [&](int q, int, int, const TIn* p, bool whole, auto in) {
      load_pack(f.b[q], p, whole, in);
    });
  }

  // The fetched packs into a scratch buffer as floats (bf16 widened): along
  // a scratch row in one store, or (the non-transposed A) one float per k.
  KOKKOS_INLINE_FUNCTION static void store_a(const Fetched& f, const int tid, float* const buf) {
    float* const as = buf;
    for (int q = 0; q < a_packs; ++q) {
      int k, r;
      a_pack_at(tid + q * NT, k, r);
      float v[V];
      for (int u = 0; u < V; ++u) v[u] = to_float(f.a[q].v[u]);
      if constexpr (TransA) {
        store_floats(as + k * a_ld + r, v);
      } else {
        for (int u = 0; u < V; ++u) as[(k + u) * a_ld + r] = v[u];
      }
    }
  }

  KOKKOS_INLINE_FUNCTION static void store_b(const Fetched& f, const int tid, float* const buf) {
    float* const bs = buf + a_floats;
    for (int q = 0; q < b_packs; ++q) {
      int k, n;
      b_pack_at(tid + q * NT, k, n);
      float v[V];
      for (int u = 0; u < V; ++u) v[u] = to_float(f.b[q].v[u]);
      store_floats(bs + k * SN + n, v);
    }
  }

  // Register tiles, K split: the micro-tile's sums into the range's partial
  // matrix (no epilogue: SplitReduce's), V columns at once.
  KOKKOS_INLINE_FUNCTION void write_partial(const float (&tile)[TM][TN], const index_t range,
                                            const index_t r0, const index_t c0) const {
    float* const part = partial_ + range * rows_ * ldw_;
    for_each_row([&](const int i) {
      if (r0 + i >= rows_) return;
      for (int j = 0; j < TN; j += V)
        if (c0 + col(j) < cols_) store_floats(part + (r0 + i) * ldw_ + c0 + col(j), &tile[i][j]);
    });
  }

  // Host (one thread, many sub-tiles): a team's work over its K range (all
  // of K, or one of split_.count) and, with exact_k, exact chunks: only the k
  // within K and the sub-tiles that cover D are staged and multiplied.
  KOKKOS_INLINE_FUNCTION void host_team(const Member& team) const {
    static_assert(NT == 1, "the host's team paths are for one thread per team");
    const Place place = place_of(team.league_rank());
    const index_t tile = place.tile, range = place.range, m0 = place.m0, n0 = place.n0;
    const index_t k_begin = place.k_begin, k_end = place.k_end;
    const index_t tiles = tiles_m_ * tiles_n_;
    const bool bias_team = FuseBias && n0 == 0;
    const int level = Tuning::scratch_level;
    const Scratch scratch(team.team_scratch(level), scratch_floats());
    float* const buf = aligned(scratch.data());
    float* const partial = partial_ ? partial_ + (range * tiles + tile) * (BM * BN) : nullptr;
    const int a_panels = sub_tiles(rows_ - m0, SM, BM), b_panels = sub_tiles(cols_ - n0, SN, BN);

    double bsum[FuseBias ? BM / SM : 1][bias_rows] = {};
    for (index_t k0 = k_begin; k0 < k_end; k0 += BK) {
      const int depth = Tuning::exact_k && k_end - k0 < BK ? int(k_end - k0) : BK;
      if (Tuning::exact_k && !(depth == BK && a_panels == BM / SM && b_panels == BN / SN)) {
        stage_exact(buf, k0, depth, m0, n0, a_panels, b_panels);
      } else {  // (nothing to leave out: the compile-time loops are faster)
        stage(team, buf, k0, m0, n0);
      }
      team.team_barrier();
      compute(team, buf, m0, n0, Chunk{k0 == k_begin, k0 + BK >= k_end, depth, a_panels, partial},
              bias_team, bsum);
      team.team_barrier();
    }
    if (bias_team) write_bias(team, m0, bsum, range);
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

  // Host (exact_k): stages what the tile's sub-tiles read and no more: the
  // chunk's `depth` k within K, the a_panels × SM rows of op(A) and b_panels
  // × SN columns of B that cover the matrices (zeros past their edges). Runs
  // along contiguous memory, which GCC vectorizes (bf16 widening included).
  KOKKOS_INLINE_FUNCTION void stage_exact(float* buf, const index_t k0, const int depth,
                                          const index_t m0, const index_t n0, const int a_panels,
                                          const int b_panels) const {
    float* const as = buf;
    float* const bs = buf + a_floats;
    if constexpr (TransA) {
      for (int k = 0; k < depth; ++k)
        stage_row(as + k * a_ld, a_ + (k0 + k) * lda_ + m0, a_panels, SM, a_panel, rows_ - m0);
    } else {  // transposed into scratch
      for (int r = 0; r < a_panels * SM; ++r) {
        float* const dst = as + r / SM * a_panel + r % SM;
        if (r < rows_ - m0) {
          const TIn* const src = a_ + (m0 + r) * lda_ + k0;
          for (int k = 0; k < depth; ++k) dst[k * a_ld] = to_float(src[k]);
        } else {
          for (int k = 0; k < depth; ++k) dst[k * a_ld] = 0.0f;
        }
      }
    }
    for (int k = 0; k < depth; ++k)
      stage_row(bs + k * SN, b_ + (k0 + k) * ldb_ + n0, b_panels, SN, b_panel, cols_ - n0);
  }

  // dst[p·stride + c] = src[p·width + c] for the `panels` panels of `width`,
  // 0 from element `valid` of src on.
  KOKKOS_INLINE_FUNCTION static void stage_row(float* dst, const TIn* src, const int panels,
                                               const int width, const int stride,
                                               const index_t valid) {
    for (int p = 0; p < panels; ++p, dst += stride, src += width) {
      const index_t left = valid - index_t(p) * width;
      const int n = left >= width ? width : left > 0 ? int(left) : 0;
      for (int c = 0; c < n; ++c) dst[c] = to_float(src[c]);
      for (int c = n; c < width; ++c) dst[c] = 0.0f;
    }
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

  // A thread's micro-tile: rows ty·TM + i, columns tx·V + col(j) of its
  // sub-tile: contiguous rows, columns in groups of V consecutive ones spaced
  // V·TX apart (on a host, TX = 1: contiguous too).
  KOKKOS_INLINE_FUNCTION static constexpr int col(const int j) { return j / V * V * TX + j % V; }

  // acc[i][slot(j)] += Σ_{k < depth} a[k·a_ld + i] · b[k·SN + col(j)]; depth
  // is BK but in a host's (exact_k) last chunk. With V > 1 the operands load
  // in packs (16-byte shared-memory loads on a GPU).
  KOKKOS_INLINE_FUNCTION static void micro_kernel(float (&acc)[TM][TN], const float* a,
                                                  const float* b, const int depth = BK) {
    auto step = [&](const int k) {
      float av[TM], bv[TN];
      if constexpr (V > 1) {
        LLMK_UNROLL for (int i = 0; i < TM; i += V) load_floats(av + i, a + k * a_ld + i);
        LLMK_UNROLL for (int j = 0; j < TN; j += V) load_floats(bv + j, b + k * SN + col(j));
      } else {
        LLMK_UNROLL for (int i = 0; i < TM; ++i) av[i] = a[k * a_ld + i];
        LLMK_UNROLL for (int j = 0; j < TN; ++j) bv[j] = b[k * SN + col(j)];
      }
      LLMK_UNROLL for (int i = 0; i < TM; ++i)
        LLMK_UNROLL for (int j = 0; j < TN; ++j) acc[i][slot(j)] += av[i] * bv[j];
    };
    constexpr int unroll = Tuning::template k_unroll<TransA>;
    if constexpr (unroll > 0) {  // (nvcc's pragma; host compilers never see it)
#if defined(__CUDA_ARCH__)
#pragma unroll(unroll)
#endif
      for (int k = 0; k < depth; ++k) step(k);
    } else {
      for (int k = 0; k < depth; ++k) step(k);
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
  // r = r0 + i, c = c0 + col(j) that lie within D.
  template <class F>
  KOKKOS_INLINE_FUNCTION void for_each_in_d(const float (&tile)[TM][TN], const index_t r0,
                                            const index_t c0, const F& f) const {
    const bool inside = r0 + TM - 1 < rows_ && c0 + col(TN - 1) < cols_;
    for_each_row([&](const int i) {
      const index_t r = r0 + i;
      TD* const row = d_ + r * ldd_ + c0;
      if (inside) {  // (no bounds checks: GCC vectorizes the row)
        for (int j = 0; j < TN; ++j) f(row[col(j)], tile[i][j], r, c0 + col(j));
      } else if (r < rows_) {
        for (int j = 0; j < TN; ++j)
          if (c0 + col(j) < cols_) f(row[col(j)], tile[i][j], r, c0 + col(j));
      }
    });
  }

  // The epilogue of one element: D(r, c) ⟵ v ⊙ gelu'(pre_gelu(r, c)), v its
  // whole sum over K.
  KOKKOS_INLINE_FUNCTION void finish(TD& d, float v, const index_t r, const index_t c) const {
    if constexpr (has_gelu) {
      if (pre_) v *= gelu_grad(to_float(pre_[r * ldp_ + c]));
    }
    update(d, v, overwrite_);
  }

  KOKKOS_INLINE_FUNCTION void write_d(const float (&tile)[TM][TN], const index_t r0,
                                      const index_t c0) const {
    for_each_in_d(tile, r0, c0, [&](TD& d, float v, const index_t r, const index_t c) {
      finish(d, v, r, c);
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

  // Host: sums ⟵ tile (= when store, += otherwise), a micro-tile's running sums.
  KOKKOS_INLINE_FUNCTION static void accumulate(float* const sums, const float (&tile)[TM][TN],
                                                const bool store) {
    if (store) {
      LLMK_UNROLL for (int i = 0; i < TM; ++i)
        for (int j = 0; j < TN; ++j) sums[i * TN + j] = tile[i][j];
    } else {
      LLMK_UNROLL for (int i = 0; i < TM; ++i)
        for (int j = 0; j < TN; ++j) sums[i * TN + j] += tile[i][j];
    }
  }

  // Host: a chunk's products of one micro-tile, `sums` its running sums in
  // scratch (sums_in_scratch()) or, when K is split, in the team's partial
  // tile (the epilogue is then SplitSum's).
  KOKKOS_INLINE_FUNCTION void add_chunk(float (&tile)[TM][TN], const index_t r0, const index_t c0,
                                        float* const sums, const Chunk chunk) const {
    if (chunk.partial) {
      accumulate(sums, tile, chunk.first);
    } else if (sums_in_d()) {
      add_to_d(tile, r0, c0, chunk.first && overwrite_);
    } else if (!chunk.last) {
      accumulate(sums, tile, chunk.first);
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
                                      const index_t n0, const Chunk chunk, const bool bias_team,
                                      BiasSums& bsum) const {
    const float* const as = buf;
    const float* const bs = buf + a_floats;
    for_each_thread(team, [&](int ty, int tx) {
      // A's panel (bk × sm) stays in L1 while B's panels stream past it,
      // and D (or the sums) is updated along its rows (sequential,
      // prefetcher-friendly). Sub-tiles wholly outside D are skipped
      // (their scratch is zeros).
      float* const sums = (chunk.partial ? chunk.partial : buf + a_floats + b_floats) +
                          (ty * TX + tx) * TM * TN;
      const int si_end = sub_tiles(rows_ - m0, SM, BM), sj_end = sub_tiles(cols_ - n0, SN, BN);
      for (int si = 0; si < si_end; ++si) {
        for (int sj = 0; sj < sj_end; ++sj) {
          float tile[TM][TN];
          {
            float acc_chunk[TM][TN] = {};
            micro_kernel(acc_chunk, as + si * a_panel + ty * TM, bs + sj * b_panel + tx * V,
                         chunk.depth);
            to_tile(acc_chunk, tile);
          }
          add_chunk(tile, m0 + si * SM + ty * TM, n0 + sj * SN + tx * V,
                    sums + (si * (BN / SN) + sj) * NT * TM * TN, chunk);
        }
      }
      if constexpr (FuseBias) {  // (exact_k: only the staged part of the chunk)
        if (bias_team) sum_bias_rows(as, ty * TX + tx, bsum, chunk.depth, chunk.a_panels);
      }
    });
  }

  // FuseBias: bsum[p][u] += Σ_k As(k, row p·SM + tid + u·NT) for this chunk,
  // a float sum over the chunk added to a double per row; `depth` k of the
  // first `panels` panels (all of them but on a host, exact_k).
  template <class BiasSums>
  KOKKOS_INLINE_FUNCTION static void sum_bias_rows(const float* as, const int tid,
                                                   BiasSums& bsum, const int depth = BK,
                                                   const int panels = BM / SM) {
    for (int p = 0; p < panels; ++p) {
      float s[bias_rows] = {};
      for (int k = 0; k < depth; ++k)
        for (int u = 0; u < bias_rows; ++u)
          if (tid + u * NT < SM) s[u] += as[p * a_panel + k * a_ld + tid + u * NT];
      for (int u = 0; u < bias_rows; ++u) bsum[p][u] += s[u];
    }
  }

  // dbias ⟵ the bias rows' sums; with K split (split_k), the range's
  // partial sums, which SplitSum adds.
  template <class BiasSums>
  KOKKOS_INLINE_FUNCTION void write_bias(const Member& team, const index_t m0,
                                         const BiasSums& bsum, const index_t range) const {
    double* const partial = bias_partial_ ? bias_partial_ + range * tiles_m_ * BM : nullptr;
    for_each_thread(team, [&](int ty, int tx) {
      const int tid = ty * TX + tx;
      for (int p = 0; p < BM / SM; ++p)
        for (int u = 0; u < bias_rows; ++u) {
          const index_t r = m0 + p * SM + tid + u * NT;
          if (tid + u * NT >= SM || r >= rows_) continue;
          if (partial) {
            partial[r] = bsum[p][u];
          } else {
            update(bias_[r], float(bsum[p][u]), overwrite_bias_);
          }
        }
    });
  }
};

}  // namespace llmk::kernels
