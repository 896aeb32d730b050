// Split-K plans of the tiled GEMM (kernels/gemm_tiled.hpp): when a product's
// tiles (over all of its batch) leave threads or SMs idle, K is split into
// ranges of whole chunks, one team per (range, tile), whose float partial
// sums go to the call's workspace; a second pass adds them in range order and
// applies the epilogue. The plan depends only on the sizes and on
// Tuning::resident_teams(): runs with the same plan are bitwise identical.
#pragma once

#include <kernels/gemm_operand.hpp>
#include <kernels/gemm_tiled_config.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace llmk::kernels {

// K in `count` ranges of `span` (whole chunks); {1, K}: not split.
struct SplitPlan {
  index_t count, span;
};

template <class C>
struct SplitK {
  using Tuning = typename C::tuning;
  static constexpr int BM = C::BM, BN = C::BN, BK = C::BK, V = C::V;

  static index_t batches(const GemmShape& s) { return s.outer * s.inner; }

  // The plan for a product of these sizes (host: split_plan, when the tiles
  // are fewer than the threads; register tiles: wave_split_plan).
  static SplitPlan plan(const GemmShape& s) {
    if constexpr (!Tuning::split_k) {
      return {1, s.depth};
    } else if constexpr (C::one_subtile) {
      return wave_split_plan(s.rows, s.cols, s.depth, batches(s));
    } else {
      return split_plan(s.rows, s.cols, s.depth, batches(s));
    }
  }

  // Host (split_k): the floats of workspace the plan takes, at most, for
  // any R' ≤ R rows and K' ≤ K (a call's row chunks share one workspace,
  // sized for the largest; the split count is not monotonic in either).
  // Register tiles: exactly what the plan for these sizes takes. With the
  // fused bias, per range and row a double sum besides.
  static std::size_t workspace(const GemmShape& s, const bool bias) {
    const index_t R = s.rows, N = s.cols, K = s.depth, batch = batches(s);
    if constexpr (!Tuning::split_k) {
      return 0;
    } else if constexpr (C::one_subtile) {
      const SplitPlan plan = wave_split_plan(R, N, K, batch);
      if (plan.count == 1) return 0;
      const std::size_t ldw = (N + V - 1) / V * V, tiles_m = (R + BM - 1) / BM;
      return std::size_t(plan.count) * (batch * R * ldw + (bias ? tiles_m * BM * 2 : 0));
    } else {
      const index_t tiles_n = (N + BN - 1) / BN * batch, chunks = (K + BK - 1) / BK;
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

  // Host (split_k): when the tiles are fewer than the threads, K in
  // ceil(threads / tiles) ranges of whole chunks (fewer if K has fewer
  // chunks), so that every thread has a team; else one range, all of K.
  static SplitPlan split_plan(const index_t R, const index_t N, const index_t K,
                              const index_t batch) {
    const index_t tiles = (R + BM - 1) / BM * ((N + BN - 1) / BN) * batch;
    const index_t chunks = (K + BK - 1) / BK;
    const index_t threads = Tuning::resident_teams();  // (a host: its threads)
    if (tiles >= threads || chunks < 2) return {1, K};
    const index_t wanted = (threads + tiles - 1) / tiles;
    const index_t per_range = (chunks + wanted - 1) / wanted;  // chunks
    return {(chunks + per_range - 1) / per_range, per_range * BK};
  }

  // Register tiles (split_k): K in the ranges of whole chunks that finish
  // soonest by a wave model. A processor runs resident_teams() teams at
  // once, so a league of T teams takes ⌈T / slots⌉ waves, each as long as a
  // team's chunks; split into s ranges a tile's teams are s times more and
  // each 1/s as long, and the partial sums cost their writes and second pass
  // ((2s + 1) R·N floats a product) at split_bytes_per_chunk a chunk's time.
  // E.g. the seed shape's dweight (144 tiles, 512 chunks, 264 slots on an
  // H200): unsplit 1 wave of 512 chunks; 11 ranges 6 waves of 47 chunks + ~20.
  static SplitPlan wave_split_plan(const index_t R, const index_t N, const index_t K,
                                   const index_t batch) {
    const index_t tiles = (R + BM - 1) / BM * ((N + BN - 1) / BN) * batch;
    const index_t chunks = (K + BK - 1) / BK;
    const index_t slots = std::max<index_t>(1, Tuning::resident_teams());
    auto waves = [&](const index_t teams) { return double((teams + slots - 1) / slots); };
    SplitPlan best{1, K};
    double best_cost = waves(tiles) * double(chunks);
    const index_t most = std::min<index_t>(Tuning::max_split, chunks);
    for (index_t s = 2; s <= most && tiles * s <= INT32_MAX; ++s) {  // (Kokkos 3: an int league)
      const index_t per_range = (chunks + s - 1) / s;
      if ((chunks + per_range - 1) / per_range != s) continue;  // the same ranges as fewer
      const double bytes =
          double(2 * s + 1) * double(R) * double(N) * double(batch) * sizeof(float);
      const double cost =
          waves(tiles * s) * double(per_range) + bytes / Tuning::split_bytes_per_chunk;
      if (cost < best_cost) {
        best = {s, per_range * BK};
        best_cost = cost;
      }
    }
    return best;
  }
};

}  // namespace llmk::kernels
