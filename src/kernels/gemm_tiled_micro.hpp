// The tiled GEMM's micro-kernel (kernels/gemm_tiled.hpp): one thread's TM × TN
// micro-tile of sums over the staged k of a chunk, read from scratch
// (gemm_tiled_staging.hpp), and the helpers that hand its sums on.
#pragma once

#include <kernels/gemm_tiled_config.hpp>
#include <kernels/host_vectors.hpp>

namespace llmk::kernels {

template <class C>
struct MicroTile {
  static constexpr int TM = C::TM, TN = C::TN, TX = C::TX, V = C::V, BK = C::BK;
  static constexpr int a_ld = C::a_ld, b_ld = C::b_ld;

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

  // acc[i][slot(j)] += Σ_{k < depth} a[k·a_ld + i] · b[k·b_ld + col(j)]; depth
  // is BK but in a host's (exact_k) last chunk. With V > 1 the operands load
  // in packs (16-byte shared-memory loads on a GPU).
  KOKKOS_INLINE_FUNCTION static void micro_kernel(float (&acc)[TM][TN], const float* a,
                                                  const float* b, const int depth = BK) {
    auto step = [&](const int k) {
      float av[TM], bv[TN];
      if constexpr (V > 1) {
        LLMK_UNROLL for (int i = 0; i < TM; i += V) C::load_floats(av + i, a + k * a_ld + i);
        LLMK_UNROLL for (int j = 0; j < TN; j += V) C::load_floats(bv + j, b + k * b_ld + col(j));
      } else {
        LLMK_UNROLL for (int i = 0; i < TM; ++i) av[i] = a[k * a_ld + i];
        LLMK_UNROLL for (int j = 0; j < TN; ++j) bv[j] = b[k * b_ld + col(j)];
      }
      LLMK_UNROLL for (int i = 0; i < TM; ++i)
        LLMK_UNROLL for (int j = 0; j < TN; ++j) acc[i][slot(j)] += av[i] * bv[j];
    };
    constexpr int unroll = C::k_unroll;
    if constexpr (unroll > 0) {  // (nvcc's pragma; host compilers never see it)
#if defined(__CUDA_ARCH__)
#pragma unroll(unroll)
#endif
      for (int k = 0; k < depth; ++k) step(k);
    } else {
      for (int k = 0; k < depth; ++k) step(k);
    }
  }

  // tile ⟵ Σ_{k < depth} a[k·a_ld + i] · b[k·b_ld + col(j)], in natural order:
  // one chunk's products of a micro-tile. Hosts whose micro-tile is whole
  // vectors (TN a multiple of detail::kLanes, one thread: col(j) = j) that
  // fit the vector registers with a row of B and a broadcast keep the sums
  // in GCC vectors, a row's A broadcast at a time: from plain arrays GCC 12
  // spilled sums of an 8 × 48 tile to the stack and permuted B's lanes
  // (vpermd) on AVX-512, at under half the speed (docs/cpu.md).
  KOKKOS_INLINE_FUNCTION static void chunk_tile(float (&tile)[TM][TN], const float* a,
                                                const float* b, const int depth = BK) {
#if LLMK_HOST_VECTORS
    constexpr int L = detail::kLanes, NV = TN / L;
    if constexpr (TX == 1 && V == 1 && TN % L == 0 && (TM + 1) * NV + 1 <= detail::kRegisters) {
      using detail::Floats;
      Floats acc[TM][NV] = {};
      for (int k = 0; k < depth; ++k) {
        Floats bv[NV];
        LLMK_UNROLL for (int v = 0; v < NV; ++v) bv[v] = detail::load_floats(b + k * b_ld + L * v);
        LLMK_UNROLL for (int i = 0; i < TM; ++i) {
          const Floats x = detail::broadcast(a[k * a_ld + i]);
          LLMK_UNROLL for (int v = 0; v < NV; ++v) acc[i][v] += x * bv[v];
        }
      }
      LLMK_UNROLL for (int i = 0; i < TM; ++i)
        LLMK_UNROLL for (int v = 0; v < NV; ++v) detail::store_floats(tile[i] + L * v, acc[i][v]);
      return;
    }
#endif
    float acc[TM][TN] = {};
    micro_kernel(acc, a, b, depth);
    to_tile(acc, tile);
  }

  KOKKOS_INLINE_FUNCTION static void to_tile(const float (&acc)[TM][TN], float (&tile)[TM][TN]) {
    LLMK_UNROLL for (int i = 0; i < TM; ++i)
      LLMK_UNROLL for (int j = 0; j < TN; ++j) tile[i][j] = acc[i][slot(j)];
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
};

}  // namespace llmk::kernels
