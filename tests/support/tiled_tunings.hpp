// Tunings of kernels/gemm_tiled.hpp for its direct tests
// (test_tiled_register_tiles.cpp, test_tiled_gemm_forms.cpp): each path of
// the kernel on every space, so that CI, which has no GPU, covers the GPU's.
//  - RegisterTuning<Slots, Async, Pad>: on a host a small tuning of the
//    register-tile path (a 1 × 1 team whose 8 × 8 micro-tile is the whole
//    tile, packs of 4, chunks of 4, two buffers; Async: both operands through
//    AsyncCopy, whose host fallback copies synchronously but with the GPU's
//    indexing; Pad: the scratch rows' padding); on Cuda the shipped tuning.
//  - HostSubTiles<Slots, ExactK>: the host's sub-tile path with small tiles:
//    2 × 3 micro-tiles sweeping 4 × 9 tiles (2 × 3 sub-tiles) over chunks
//    of 4, exact chunks at K's end or not.
//  - Shipped<Slots>: the space's own tuning.
// Slots (resident_teams()) decides split-K: with many, shapes of a few tiles
// split K into several ranges; with one, nothing splits.
#pragma once

#include <kernels/tuning.hpp>

#include <type_traits>

namespace llmk_test {

using llmk::index_t;

template <int Slots, bool Async, int Pad = 0>
struct HostRegisterTiles {
  static constexpr int team_size = 1, vector_length = 1;
  static constexpr int tm = 8, tn = 8, vec = 4;
  static constexpr int bm = 8, bn = 8, bk = 4;
  static constexpr int a_pad = Pad, stages = 2;
  template <bool TransA, bool TransB>
  static constexpr int k_unroll = 0;
  template <bool TransA, bool TransB>
  static constexpr bool async_a = Async;
  template <bool TransA, bool TransB>
  static constexpr bool async_b = Async;
  static constexpr int scratch_level = 1;
  static constexpr bool fuse_bias = true, exact_k = false, split_k = true;
  static constexpr int max_split = 16;
  static constexpr double split_bytes_per_chunk = 1e6;
  using launch_bounds = Kokkos::LaunchBounds<>;
  static index_t resident_teams() { return Slots; }
};

template <int Slots, bool ExactK>
struct HostSubTiles {
  static constexpr int team_size = 1, vector_length = 1;
  static constexpr int tm = 2, tn = 3, vec = 1;
  static constexpr int bm = 4, bn = 9, bk = 4;
  static constexpr int a_pad = 0, stages = 1;
  template <bool TransA, bool TransB>
  static constexpr int k_unroll = 0;
  template <bool TransA, bool TransB>
  static constexpr bool async_a = false;
  template <bool TransA, bool TransB>
  static constexpr bool async_b = false;
  static constexpr int scratch_level = 1;
  static constexpr bool fuse_bias = true, exact_k = ExactK, split_k = true;
  static constexpr int max_split = 16;
  static constexpr double split_bytes_per_chunk = 1e6;
  using launch_bounds = Kokkos::LaunchBounds<>;
  static index_t resident_teams() { return Slots; }
};

// The shipped tuning with a given number of team slots, and AsyncCopy for
// both operands of every form (Async) or, as shipped, where it says.
template <class Base, int Slots, bool Async = false>
struct WithSlots : Base {
  static index_t resident_teams() { return Slots; }
  template <bool TransA, bool TransB>
  static constexpr bool async_a = Async || Base::template async_a<TransA, TransB>;
  template <bool TransA, bool TransB>
  static constexpr bool async_b = Async || Base::template async_b<TransA, TransB>;
};

template <class Space>
constexpr bool is_cuda() {
#ifdef KOKKOS_ENABLE_CUDA
  return std::is_same_v<Space, Kokkos::Cuda>;
#else
  return false;
#endif
}

template <class Space, int Slots, bool Async = false, int Pad = 0>
using RegisterTuning =
    std::conditional_t<is_cuda<Space>(), WithSlots<llmk::kernels::TiledTuning<Space>, Slots, Async>,
                       HostRegisterTiles<Slots, Async, Pad>>;
template <class Space, int Slots>
using Shipped = WithSlots<llmk::kernels::TiledTuning<Space>, Slots>;

// Many slots: waves of one team, split as far as allowed; one: no split.
inline constexpr int kSplitting = 1000000, kUnsplit = 1;

}  // namespace llmk_test
