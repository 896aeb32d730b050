// Per-backend launch parameters of the portable kernels, chosen at compile
// time from the execution-space type. Kernels read them from here and contain
// no backend #ifdefs of their own.
#pragma once

#include <Kokkos_Core.hpp>
#include <llmk/types.hpp>

// LLMK_UNROLL before a loop with a compile-time trip count asks for complete
// unrolling. GCC needs it for the tiled micro-kernel: left alone it
// vectorizes along k with shuffles and keeps the accumulators in memory;
// unrolled, its SLP vectorizer turns the 4 × 24 micro-tile into 12 ymm
// registers of FMAs. nvcc and clang unroll such loops by themselves (and
// nvcc's front end warns about the GCC pragma, also in host code).
#if defined(__GNUC__) && !defined(__clang__) && !defined(__NVCC__)
#define LLMK_UNROLL _Pragma("GCC unroll 64")
#else
#define LLMK_UNROLL
#endif

// LLMK_SIMD_REDUCTION(a, b) (LLMK_SIMD_SUM(a)) before a host loop that sums into a and b lets
// the compiler vectorize the sums (OpenMP's `simd reduction`: the partial
// sums in its vector lanes, added at the end, an order fixed by the binary).
// Without OpenMP the loop sums in order. LLMK_SIMD: the same for a loop
// whose iterations are independent (no sums across them).
#if defined(_OPENMP) && !defined(__CUDA_ARCH__)
#define LLMK_PRAGMA(x) _Pragma(#x)
#define LLMK_SIMD_REDUCTION(a, b) LLMK_PRAGMA(omp simd reduction(+ : a, b))
#define LLMK_SIMD_SUM(a) LLMK_PRAGMA(omp simd reduction(+ : a))
#define LLMK_SIMD LLMK_PRAGMA(omp simd)
#else
#define LLMK_SIMD_REDUCTION(a, b)
#define LLMK_SIMD_SUM(a)
#define LLMK_SIMD
#endif

namespace llmk::kernels {

// Defaults for host spaces (Serial, OpenMP): one thread per team, no vector
// lanes; a team's work is a loop that the compiler vectorizes.
template <class ExecSpace>
struct TeamTuning {
  static constexpr int team_size = 1;
  static constexpr int vector_length = 1;
  static constexpr int reduce_team_size = 1;  // dbias: threads per output channel
  static constexpr int scratch_chunk = 1024;  // floats staged in team scratch per step
  // team: k outer, columns inner (rank-1 updates that vectorize) rather than a
  // dot product per column down a strided column of B (projected 130-160 s a
  // call at the seed shape on 2 busy cores; 6.3 s this way, docs/performance.md).
  static constexpr bool k_outer = true;
};

// dbias as a column sum (column_sums.hpp): a team sums a segment of
// team_size · rows_per_thread rows of a block of lanes × (lane_bytes of
// consecutive columns) columns; its team_size threads split the rows. Host:
// one thread sweeps 128 bytes of a row (32 floats: four AVX2 registers of
// accumulators) over 512-row segments; plain loops the compiler vectorizes.
template <class ExecSpace>
struct ColumnSumTuning {
  static constexpr int team_size = 1;
  static constexpr int lanes = 1;
  static constexpr int lane_bytes = 128;
  template <class T>
  static constexpr int rows_per_thread = 512;
  static constexpr bool pack_loads = false;  // the loops vectorize by themselves
};

// Whether "auto" takes the tiled GEMM before the host libraries
// (kokkoskernels, onednn) for float32 products on a host: where its AVX-512
// micro-tile is compiled (TiledTuning below; LLMK_NATIVE on an AVX-512 CPU).
// GPT-2 124M's whole backward, fp32, 16 Xeon cores (docs/cpu.md): tiled 89
// and 655 ms against kokkoskernels' (OpenBLAS) 111 and 700 at B 4 T 64 and
// B 8 T 256 on one host (call H4), 916 against 1125 at B 8 T 256 on another
// (H3). A constant of the library's build: code built without its flags
// (the tests) reads the library's infos (ImplInfo::auto_passes_over).
#if defined(__AVX512F__)
inline constexpr bool tiled_leads_host_fp32 = true;
#else
inline constexpr bool tiled_leads_host_fp32 = false;
#endif

// The tiled GEMM (kernels/gemm_tiled.hpp; matmul's "tiled"): a team computes
// a bm × bn tile of D += op(A)·op(B) over K chunks of bk staged in team
// scratch; thread (ty, tx) of
// the team_size × vector_length grid keeps a tm × tn register micro-tile.
// Host: one thread per team sweeping 4 × 24 micro-tiles: 12 ymm accumulators,
// and with GCC 12 the fastest shape measured on Zen 3 (6 × 16 spills, 5 × 16
// and 8 × 8 were no better). The tile is 128 × 768 (a whole GPT-2 width: op(A)
// is staged once per row block) over bk = 128: the A panel of a micro-kernel
// (2 KiB) stays in L1, the staged chunk (64 + 384 KiB) mostly in the 512 KiB
// L2, and D is updated along its rows. Sizes measured at the seed shape on a
// 2-core Zen 3 (96 × 256, 128 × 384, 256 × 384, 256 × 768 and bk = 64 or 256
// were within noise or slower).
template <class ExecSpace>
struct TiledTuning {
  static constexpr int team_size = 1, vector_length = 1;
#if defined(__AVX512F__)
  // AVX-512 (32 vector registers of 16 floats): 8 × 48, 24 zmm sums beside
  // 3 loads of B and A's broadcast (gemm_tiled_micro.hpp's chunk_tile). At
  // GPT-2's products (M 2048) on 16 Xeon threads: 725-1122 GFLOP/s, where
  // the 4 × 24 tile from plain arrays ran 340-464; on 2 threads 0.92-0.99x
  // OpenBLAS's time. 8 × 32, 12 × 32, 6 × 48 and tiles of 128 × 384 or
  // 64 × 768 were not faster beyond the noise (on 16 threads two runs of this
  // very tuning differed by up to 20 %), 10 × 48 spills
  // (perf/dev/tiled_host_bench.cpp, docs/cpu.md).
  static constexpr int tm = 8, tn = 48;
#else
  static constexpr int tm = 4, tn = 24;
#endif
  static constexpr int bm = 128, bn = 768, bk = 128;
  static constexpr int a_pad = 0;
  // Host scratch is ordinary memory; level 1 because Kokkos documents 32 KiB
  // as the host level-0 maximum.
  static constexpr int scratch_level = 1;
  // dbias summed by the dweight kernel from its staged dout: costs the same
  // as column_sums here (about 1% of the call) and reads dout once less.
  static constexpr bool fuse_bias = true;
  // exact_k: a team stages and multiplies only the k of its chunks that lie
  // within K (a run-time trip count; the GPU's is compile-time) and only the
  // sub-tiles that cover the matrices; whole chunks keep the compile-time
  // staging loops (the run-time ones cost dweight 5-10% at the seed shape).
  // At M = 64 dweight's K is 64: half of each 128-deep chunk was zeros,
  // multiplied all the same.
  // split_k: a product with fewer tiles than threads splits K into ranges of
  // whole chunks, one team per (range, tile) summing into a float partial
  // tile in the call's workspace; a second pass adds the partials in range
  // order and applies the epilogue (deterministic for a given thread count).
  // At M = 64, C = 768 dinp is one 128 × 768 tile over K = 50304: one of the
  // two threads worked.
  // Measured at B=1 T=64 C=768 OC=50304, 2 threads, Zen 3, each GEMM alone
  // (quiet machine, best of 5): dinp 107 -> 41 ms, dweight + dbias 81 -> 40 ms;
  // the call (llmk-perf, medians of 4 runs, load ~2 from other jobs) 193-250
  // -> 83-104 ms against OpenBLAS's 68-80 (0.29-0.38 -> 0.72-0.87), bf16
  // 199-230 -> 84-88 ms. The seed shape is unchanged (GEMMs alone 284-287 vs
  // 280-290 ms dinp, 294-296 vs 291-295 ms dweight; the call ~0.66x OpenBLAS).
  static constexpr bool exact_k = true;
  static constexpr bool split_k = true;
  // Register tiles only (the GPU's): pack loads of `vec` elements and the
  // number of scratch buffers a chunk cycles through.
  static constexpr int vec = 1, stages = 1;
  // Which operands a product of the form (TransA, TransB) stages by
  // AsyncCopy (kernels/async_copy.hpp) rather than through registers
  // (matmul's dinp is NN, dweight TN).
  template <bool TransA, bool TransB>
  static constexpr bool async_a = false;
  template <bool TransA, bool TransB>
  static constexpr bool async_b = false;
  // How far nvcc unrolls the micro-kernel's k loop, per form; 0: its own
  // choice.
  template <bool TransA, bool TransB>
  static constexpr int k_unroll = 0;
  using launch_bounds = Kokkos::LaunchBounds<>;
  // Teams that run at once: one per thread (split_k's plan).
  static index_t resident_teams() { return ExecSpace().concurrency(); }
};

// The layer-norm backward's blocked kernel (layernorm_backward.hpp): a team
// per block of at least rows_per_block rows (more when M would need more
// than max_blocks teams: the partial column sums take blocks·C floats), in
// sub-blocks of sub_rows rows whose dinp rows and column sums it computes
// while they are in cache. Host: one thread per team, loops that vectorize;
// 16 rows of 768 floats of dout and inp are 96 KiB, in the L2.
template <class ExecSpace>
struct LayernormTuning {
  static constexpr int team_size = 1;
  static constexpr int vector_length = 1;
  static constexpr int rows_per_block = 64;
  static constexpr int sub_rows = 16;
  static constexpr int max_blocks = 4096;
  // The second pass: a team adds the blocks' partials of reduce_columns
  // columns, its reduce_threads threads each every reduce_threads-th block.
  static constexpr int reduce_columns = 64;
  static constexpr int reduce_threads = 1;
  static constexpr int vec = 1;  // (the host's rows are plain loops)
  // The rows-in-registers kernel (layernorm_rows.hpp) is the GPU's: a host
  // core's cache holds a row anyway.
  static constexpr bool rows_in_registers = false;
  template <class T>
  static constexpr int row_chunks = 1;
  static constexpr int rows_block = 1;
  template <class T>
  static constexpr int rows_per_step = 1;
  template <class T>
  static constexpr int rows_pack_bytes = 16;
  using rows_launch_bounds = Kokkos::LaunchBounds<>;
};

// The classifier backward's fused kernel (classifier_backward.hpp): a team
// of team_size × vector_length per row, each lane loading `unroll` packs of
// pack_bytes at a time. Host: a thread per row, one 16-byte pack after the
// other (a row of 50304 floats, 196 KiB, stays in a Zen 3 core's 512 KiB L2
// for the second pass).
template <class ExecSpace>
struct ClassifierTuning {
  static constexpr int team_size = 1, vector_length = 1;
  static constexpr int pack_bytes = 16;
  static constexpr int unroll = 1;
  using launch_bounds = Kokkos::LaunchBounds<>;
};

#ifdef KOKKOS_ENABLE_CUDA
// Cuda: a team is 8 warps-worth of (thread × lane) pairs; lanes run along the
// contiguous dimension so that a warp's loads are coalesced.
template <>
struct TeamTuning<Kokkos::Cuda> {
  static constexpr int team_size = 8;
  static constexpr int vector_length = 32;
  static constexpr int reduce_team_size = 512;  // as the seed's bias kernel
  static constexpr int scratch_chunk = 2048;
  static constexpr bool k_outer = false;  // a register dot product per column
};

// Cuda: a lane loads 16 consecutive bytes of a row at once (4 floats, 8
// bf16), so a warp reads 512 contiguous bytes per row, and its
// rows_per_thread loads are unrolled; 8 warps split a segment of 512 rows
// (float) or 256 (bf16): 128 KiB of dout per team either way. Measured on an
// H200 (perf/dev/column_sums_bench.cpp, docs/performance.md): float at the
// seed shape 41.1 µs (64 rows per thread) against 43.0 (32) and 44.0 (16);
// at the LM head 419 against 428 and 441; bf16 best at 32 rows (26.4 µs
// against 33.5 at 64). Earlier: one float per lane and a run-time trip
// count, 1.3 TB/s; four floats per lane strided by 32 lanes, 2.1 TB/s.
template <>
struct ColumnSumTuning<Kokkos::Cuda> {
  static constexpr int team_size = 8;
  static constexpr int lanes = 32;
  static constexpr int lane_bytes = 16;
  template <class T>
  static constexpr int rows_per_thread = sizeof(T) == 4 ? 64 : 32;
  static constexpr bool pack_loads = true;
};

// Cuda: 8 warps of 32 lanes; warp ty owns rows 16·ty .. 16·ty + 15 of a
// 128 × 128 tile and lane tx the columns 4·tx .. 4·tx + 3: a 16 × 4
// micro-tile in registers over chunks of bk = 16. Per k a warp reads its 16 A
// values as 4 broadcast 16-byte loads and its B values as one 16-byte load
// per lane (8 shared-memory wavefronts for 64 FMAs; the older grid of rows
// ty + 8i and columns tx + 32j read them one float at a time: 20 wavefronts,
// more than the FMAs' issue slots, and capped it at 26/16 TFLOP/s). Chunks
// cycle through two scratch buffers, one barrier per chunk:
//  - dinp: a thread loads its share of chunk c + 1 into registers (16-byte
//    loads where rows are aligned and the chunk inside) before the FMAs of
//    chunk c and stores it after them, A's share around the first half of
//    the k, B's around the second (8 registers waiting at a time). Its A is
//    stored transposed one float per k, at a row stride of 132 words (a
//    multiple of 4 for the 16-byte reads; 2-way conflicts on 8 stores).
//  - dweight (float inputs): both operands by cp.async (AsyncCopy), 16 bytes
//    straight into shared memory: no registers, no stores. For dinp, whose A
//    must be transposed, 4-byte cp.asyncs were slower (seed 1.14 -> 1.39 ms;
//    even its B alone by cp.async: 1.23). bf16 always goes through registers
//    (widened on the way).
// nvcc unrolls dweight's k loop by 2 (1.18 -> 1.10 ms at the seed shape,
// before cp.async) and leaves dinp's rolled (unrolled by 2: 1.13 -> 1.22;
// fully: spills, both slower). 128 registers: 2 teams per SM; ptxas spills
// ~200 bytes in dinp, ~44 in dweight. Not better (H200, seed shape, GEMMs
// alone): bk = 8 (dweight 1.22 against 1.10 ms), one buffer (0.66x against
// 0.74x cuBLAS), 255 registers and 1 team per SM (0.60x), 4 warps of 32 × 4
// (0.71x), 8 × 8 micro-tiles of a 64 × 256 tile (0.70x). A third buffer or
// bk = 32 does not fit: Kokkos (3.4 and 4.6) gives a team at most the 48 KB
// of sharedMemPerBlock (4.6: minus ~8 KB it reserves), two buffers take 33.
// K is split (split_k) when the tiles fill the SMs' waves badly (dweight at
// the seed shape: 144 tiles for 264 team slots: 1.94 -> 1.10 ms).
// The NT and TT forms (attention's datt = dout_h·vᵀ) stage B transposed as
// dinp's A: 16-byte global loads along k where aligned, one 4-byte store per
// k at a row stride of 132 (b_ld = 128 + a_pad: 2-way conflicts). Expected,
// not measured: the same global loads as NN, and per warp and chunk 16
// shared-store wavefronts for B instead of 8 (two 16-byte stores), on ~150
// for the micro-kernel's reads and A's stores: within ~5-10% of NN at the
// same sizes, with NN's registers (the same 2 + 2 packs in flight).
// Measurements: docs/performance.md, perf/dev/tiled_bench.cpp.
// Cuda: 8 warps of 32 lanes, a row per warp in dinp; the column sums
// spread over all 256 threads (coalesced). 16 rows per block: 512 blocks at
// M = 8192, about 4 per SM on an H200 (132 SMs) to keep loads in flight; the
// second pass spreads its 512 partial rows over 8 warps per 32 columns.
template <>
struct LayernormTuning<Kokkos::Cuda> {
  static constexpr int team_size = 8;
  static constexpr int vector_length = 32;
  static constexpr int rows_per_block = 16;
  static constexpr int sub_rows = 8;
  static constexpr int max_blocks = 4096;
  static constexpr int reduce_columns = 32;
  static constexpr int reduce_threads = 32;
  // A lane's elements per step of a row (see LayernormBlocked).
  static constexpr int vec = 4;
  // Rows in registers (layernorm_rows.hpp), for C a multiple of a pack.
  // Registers decide how many warps an SM holds, and warps in flight decide
  // the speed: a lane keeps ~6 floats per element it holds (dout, norm,
  // weight, dinp's old value, its two column sums), so a lane holds few
  // elements (wide rows span several warps) and 2 teams of 256 threads fit
  // an SM (≤ 128 registers each). Measured on an H200 (B 8, T 1024, dinp
  // accumulated; perf/dev/layernorm_bench.cpp, docs/performance.md):
  //  - fp32: 16-byte packs, ≤ 2 a lane, 2 rows a group at once (C = 768 on
  //    4 warps: 48.0 µs, C = 1600 on 8: 82.9); one row at a time 50.4 / 89.3,
  //    3 packs a lane 47.5 / 90.8, 3-4 rows at once spill (86-236).
  //  - bf16: 8-byte packs (4 elements), ≤ 4 a lane, a row at a time (C = 768
  //    on 2 warps: 36.4 µs, 1600 on 4: 57.8); 16-byte packs 37.2 / 59.4,
  //    2 rows at once 35.7 / 72-85.
  //  The team's 8 warps take 32 rows a block (64: 1 team per SM, 2-3 times
  //  slower).
  static constexpr bool rows_in_registers = true;
  template <class T>
  static constexpr int row_chunks = sizeof(T) == 4 ? 2 : 4;
  template <class T>
  static constexpr int rows_pack_bytes = sizeof(T) == 4 ? 16 : 8;
  template <class T>
  static constexpr int rows_per_step = sizeof(T) == 4 ? 2 : 1;
  static constexpr int rows_block = 32;
  using rows_launch_bounds = Kokkos::LaunchBounds<256, 2>;
};

template <>
struct TiledTuning<Kokkos::Cuda> {
  static constexpr int team_size = 8, vector_length = 32;
  static constexpr int tm = 16, tn = 4, vec = 4;
  static constexpr int bm = 128, bn = 128, bk = 16;
  static constexpr int a_pad = 4;
  static constexpr int stages = 2;
  // cp.async for both operands where both are k-major in memory (TN: 16-byte
  // copies straight into scratch), through registers otherwise: a
  // transposed operand takes 4-byte copies, slower for dinp's A, and mixing
  // (dinp's B alone by cp.async) was slower too. The NT and TT forms are
  // not measured; they follow NN.
  template <bool TransA, bool TransB>
  static constexpr bool async_a = TransA && !TransB;
  template <bool TransA, bool TransB>
  static constexpr bool async_b = TransA && !TransB;
  template <bool TransA, bool TransB>
  static constexpr int k_unroll = TransA && !TransB ? 2 : 0;
  static constexpr int scratch_level = 0;  // shared memory
  static constexpr bool fuse_bias = true;  // saves column_sums' pass over dout
  static constexpr bool exact_k = false;   // compile-time chunk loops
  static constexpr bool split_k = true;
  // Split-K's plan (kernels/gemm_tiled_split.hpp, wave_split_plan): at most this
  // many ranges, and the bytes the partial sums' writes and second pass move
  // in the time of one chunk of a team (a chunk is 2·128·128·16 FLOP; 264
  // teams at ~40 TFLOP/s take ~3.5 µs for it, in which ~3 TB/s move ~10 MB).
  static constexpr int max_split = 16;
  static constexpr double split_bytes_per_chunk = 10e6;
  using launch_bounds = Kokkos::LaunchBounds<256, 2>;
  // Teams that run at once: launch_bounds' 2 per SM.
  static index_t resident_teams() {
    return index_t(Kokkos::Cuda().cuda_device_prop().multiProcessorCount) * 2;
  }
};

// Cuda: 8 warps a row (256 threads), 16-byte loads, 4 in flight a lane,
// 4 teams an SM (≤ 64 registers); llm.c's fused_classifier runs 1024 threads
// a row. The second pass's reads hit L2 while the rows in flight fit it.
// Measured on the H200 (B 8, T 1024, Vp 50 304, bf16, device time, call B):
// team_size 8 / unroll 4 0.646 ms, 16 / 4 0.691, 16 / 8 0.760, 32 / 4 0.946.
// Tried since (session of 2026-12-02, call E2): the row held in registers,
// read once (1024 threads × 7 packs, one team an SM): 0.918 ms, slower: its
// load, reduce and write phases do not overlap with one row an SM. On Cuda,
// "auto" now takes "row_in_shared" for bf16 (two rows an SM in shared
// memory, 0.521 ms: ops/classifier_backward/row_in_shared.hpp).
template <>
struct ClassifierTuning<Kokkos::Cuda> {
  static constexpr int team_size = 8, vector_length = 32;
  static constexpr int pack_bytes = 16;
  static constexpr int unroll = 4;
  using launch_bounds = Kokkos::LaunchBounds<256, 4>;
};
#endif

}  // namespace llmk::kernels
