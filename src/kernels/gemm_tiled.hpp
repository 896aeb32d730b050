// A hierarchical Kokkos GEMM, the kernel of matmul's "tiled" implementation
// and a building block for the next operations (attention's backward):
//
//   D (R × N) ⟵ epilogue(op(A) · op(B)),   for each product of a batch,
//   matmul's dinp    (M × C)  ⟵ (dout · weight) ⊙ gelu'(pre_gelu)   NN
//   matmul's dweight (OC × C) ⟵ doutᵀ · inp  (+ dbias ⟵ Σ_rows dout) TN
//   attention's dv = attᵀ·dout_h (TN), datt = dout_h·vᵀ (NT), dq =
//   dpreatt·k·α (NN), dk = dpreattᵀ·q·α (TN), per (batch, head).
//
// "⟵" is += or = (overwrite: D is never read, it may hold NaN). A and B are
// float or bf16 (TIn), D float or bf16 (TD). The product is described by a
// GemmForm (TransA, TransB, batched; compile-time), a GemmShape (sizes and
// the batch, outer × inner products) and a GemmOperand per matrix (data,
// leading dimension, two batch strides): kernels/gemm_operand.hpp. Sums are
// float; the epilogue (kernels/gemm_epilogue.hpp: none, α, GELU's factor) is
// applied once to each element's whole sum as it is written, then the
// element is added to or replaces D, rounded once into TD (kernels::update).
// A TBias other than void fuses dbias ⟵ Σ_k op(A)(r, k) into matmul's TN
// product.
//
// A team computes a bm × bn tile of one product's D. It walks K in chunks of
// bk: the team stages the chunk of op(A) (bm × bk) and of op(B) (bk × bn) in
// team scratch as float, zero-filled outside the matrices, so any sizes work
// (gemm_tiled_staging.hpp: a transposed operand is transposed on the way),
// then each thread multiplies them into a register micro-tile with
// constant-trip loops (FMAs on registers; gemm_tiled_micro.hpp). Tile sizes,
// thread grid, scratch layout and staging come from TiledTuning<ExecSpace>
// (tuning.hpp) through TiledConfig (gemm_tiled_config.hpp); no file of the
// kernel has backend #ifdefs (kernels/async_copy.hpp holds the one
// asynchronous-copy primitive).
//
// Thread (ty, tx) of the team_size × vector_length grid owns, within a
// sub-tile of sm = tm·team_size rows × sn = tn·vector_length columns, the rows
// ty·tm + i (contiguous) and the columns tx·vec + col(j): groups of vec
// consecutive columns, vec·vector_length apart. Two structures:
//  - Register tiles (one_subtile: the GPU's; gemm_tiled_register.hpp). The
//    sub-tile is the whole tile and the micro-tile stays in registers over
//    the team's K range; the epilogue runs once. With vec = 4 a thread reads
//    its A values and B values from scratch in 16-byte packs (A's as
//    broadcasts within a warp). Chunks cycle through `stages` scratch
//    buffers: with two, a thread's share of chunk c + 1 is loaded into
//    registers before the FMAs of chunk c and stored after them, or copied by
//    AsyncCopy (async_a, async_b), so one barrier per chunk and the loads'
//    latency behind the FMAs.
//  - Sub-tiles (the host's: a 1 × 1 grid; gemm_tiled_host.hpp). The
//    micro-tile sweeps the tile's many sub-tiles per chunk, adding into D or
//    into a tile of sums in scratch; exact chunks at K's end.
// Both split K (split_k) when the tiles, over the whole batch, leave
// processors idle (gemm_tiled_split.hpp): the ranges' float partials go to
// the workspace and a second pass adds them in range order and applies the
// epilogue.
//
// Deterministic: every output element is computed by one thread, in a fixed
// order; no atomics. Split-K's ranges follow the plan: on a host the thread
// count, on a GPU its SM count; runs with the same plan are bitwise identical.
// The products of a batch must not write the same elements of D.
//
// A triangle in the shape (gemm_operand.hpp: attention's causal mask) cuts
// each tile's K range (a_upper, a_lower) or leaves out the tiles above D's
// diagonal (d_lower): about half the work of a square product, at tile
// granularity.
#pragma once

#include <kernels/gemm_epilogue.hpp>
#include <kernels/gemm_operand.hpp>
#include <kernels/gemm_tiled_args.hpp>
#include <kernels/gemm_tiled_config.hpp>
#include <kernels/gemm_tiled_host.hpp>
#include <kernels/gemm_tiled_register.hpp>
#include <kernels/gemm_tiled_split.hpp>
#include <kernels/tuning.hpp>
#include <llmk/types.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace llmk::kernels {

template <class Form, class ExecSpace, class TIn = float, class TD = float,
          class Epilogue = PlainEpilogue, class TBias = void,
          class Tuning = TiledTuning<ExecSpace>>
class TiledGemm {
 public:
  using Config = TiledConfig<Form, ExecSpace, TIn, TD, Epilogue, TBias, Tuning>;
  using Policy = typename Config::Policy;
  using Member = typename Config::Member;
  using Bias = typename Config::bias_type;

  // D ⟵ epilogue(op(A)·op(B)) for each product of the shape's batch: = when
  // overwrite (D is never read), += otherwise. std::invalid_argument for
  // negative sizes, a batch of an unbatched form, an ld shorter than its
  // row, or more tiles than a league holds.
  TiledGemm(const GemmShape& shape, const GemmOperand<TD>& D, const GemmOperand<const TIn>& A,
            const GemmOperand<const TIn>& B, const bool overwrite,
            const Epilogue& epilogue = Epilogue{})
      : shape_(shape) {
    check_gemm<Form>(shape, D, A, B);
    constexpr int BM = Config::BM, BN = Config::BN, V = Config::V;
    TiledArgs<Config>& g = args_;
    g.d = D.data;
    g.a = A.data;
    g.b = B.data;
    g.epilogue = epilogue;
    g.ldd = D.ld;
    g.lda = A.ld;
    g.ldb = B.ld;
    g.rows = shape.rows;
    g.cols = shape.cols;
    g.depth = shape.depth;
    g.tiles_m = (g.rows + BM - 1) / BM;
    g.tiles_n = (g.cols + BN - 1) / BN;
    g.triangle = shape.triangle;
    if constexpr (Config::batched) {
      g.inner = shape.inner;
      g.batch_count = shape.outer * shape.inner;
      g.d_batch = {D.outer_stride, D.inner_stride};
      g.a_batch = {A.outer_stride, A.inner_stride};
      g.b_batch = {B.outer_stride, B.inner_stride};
    }
    g.ldw = (g.cols + V - 1) / V * V;
    g.split = {1, g.depth};
    g.overwrite = overwrite;
    g.packed_a = packed<typename TiledArgs<Config>::StagedA>(A);
    g.packed_b = packed<typename TiledArgs<Config>::StagedB>(B);
    g.sums_in_d = std::is_same_v<TD, float> && epilogue.identity();
    if (g.tiles_m * g.tiles_n * g.batches() > INT32_MAX)  // (Kokkos 3: an int league)
      throw std::invalid_argument("llmk::kernels::TiledGemm: " +
                                  std::to_string(g.tiles_m * g.tiles_n * g.batches()) +
                                  " tiles, more than a league of 2^31 - 1 teams");
  }

  // The bias fused into matmul's dweight product (TransA: op(A) = doutᵀ,
  // whose rows are the output channels): dbias ⟵ Σ_k op(A)(r, k), = or +=.
  TiledGemm& with_bias(const Vector<ExecSpace, Bias>& dbias, const bool overwrite) {
    static_assert(Config::fuse_bias, "the bias is fused where TBias says so");
    if (args_.triangle != Triangle::none)  // (its sums would miss the rows' skipped parts)
      throw std::invalid_argument("llmk::kernels::TiledGemm: a fused bias takes no triangle");
    args_.bias = dbias.data();
    args_.overwrite_bias = overwrite;
    return *this;
  }

  // The floats of workspace with_split_k takes (SplitK::workspace): for a
  // host at most, for any R' ≤ R rows and K' ≤ K; for register tiles
  // exactly, for these sizes.
  static std::size_t split_k_workspace(const GemmShape& shape, const bool bias) {
    return SplitK<Config>::workspace(shape, bias);
  }

  // split_k: splits K by the plan, its partial sums in `workspace`
  // (split_k_workspace floats, 16-byte aligned); with one range nothing
  // changes.
  TiledGemm& with_split_k(float* workspace) {
    if constexpr (Tuning::split_k) {
      TiledArgs<Config>& g = args_;
      g.split = SplitK<Config>::plan(shape_);
      if (g.split.count > 1 && Config::fuse_bias) {
        g.bias_partial = reinterpret_cast<double*>(workspace);  // first: 8-byte aligned
        g.partial = workspace + g.split.count * g.tiles_m * Config::BM * 2;
      } else if (g.split.count > 1) {
        g.partial = workspace;
      }
    }
    return *this;
  }

  void run(const ExecSpace& exec, const char* label) const {
    const TiledArgs<Config>& g = args_;
    const index_t tiles = g.tiles_m * g.tiles_n * g.batches();
    if (tiles == 0) return;
    if constexpr (!Config::one_subtile) {
      if (g.depth == 0) {  // no chunk for a host team to walk: D ⟵ epilogue(0), = or +=
        Kokkos::parallel_for(std::string(label) + "_no_depth",
                             Kokkos::RangePolicy<ExecSpace, NoDepth, Kokkos::IndexType<index_t>>(
                                 exec, 0, g.batches() * g.rows * g.cols),
                             *this);
        return;
      }
    }
    Policy policy(exec, tiles * g.split.count, Config::TY, Config::TX);
    policy = policy.set_scratch_size(Tuning::scratch_level, Kokkos::PerTeam(scratch_bytes()));
    Kokkos::parallel_for(label, policy, *this);
    if constexpr (Tuning::split_k && Config::one_subtile) {
      if (g.split.count > 1) {
        Kokkos::parallel_for(std::string(label) + "_split_reduce",
                             Kokkos::RangePolicy<ExecSpace, SplitReduce, Kokkos::IndexType<index_t>>(
                                 exec, 0, g.batches() * g.rows * (g.ldw / Config::V)),
                             *this);
      }
    } else if constexpr (Tuning::split_k) {
      if (g.split.count > 1) {
        const index_t subtiles = tiles * (Config::BM / Config::SM) * (Config::BN / Config::SN);
        Kokkos::parallel_for(std::string(label) + "_split_sum",
                             Kokkos::RangePolicy<ExecSpace, SplitSum, Kokkos::IndexType<index_t>>(
                                 exec, 0, subtiles),
                             *this);
      }
    }
  }

  size_t scratch_bytes() const { return Config::Scratch::shmem_size(args_.scratch_floats()); }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    if constexpr (Config::one_subtile) {
      RegisterTiles<Config>::team(args_, team);
    } else {
      SubTiles<Config>::team(args_, team);
    }
  }

  // split_k's second passes: register tiles' and the host's.
  struct SplitReduce {};
  KOKKOS_INLINE_FUNCTION void operator()(SplitReduce, const index_t i) const {
    RegisterTiles<Config>::split_reduce(args_, i);
  }
  struct SplitSum {};
  KOKKOS_INLINE_FUNCTION void operator()(SplitSum, const index_t i) const {
    SubTiles<Config>::split_sum(args_, i);
  }
  // Host, K = 0: element i of D (of all products in turn).
  struct NoDepth {};
  KOKKOS_INLINE_FUNCTION void operator()(NoDepth, const index_t i) const {
    const TiledArgs<Config>& g = args_;
    const index_t batch = i / (g.rows * g.cols), r = i / g.cols % g.rows, c = i % g.cols;
    if (!g.skips_element(r, c)) g.finish(g.d_of(batch)[r * g.ldd + c], 0.0f, batch, r, c);
  }

 private:
  TiledArgs<Config> args_;
  GemmShape shape_;  // (host side: the split-K plan)

  // Whether an operand's rows (every product's) can be loaded in packs.
  template <class Staged, class T>
  static bool packed(const GemmOperand<T>& op) {
    return Staged::whole_packs(op.data, op.ld) &&
           (!Config::batched || (op.outer_stride % Config::V == 0 && op.inner_stride % Config::V == 0));
  }
};

}  // namespace llmk::kernels
