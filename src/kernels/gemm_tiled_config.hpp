// The compile-time side of the tiled GEMM (kernels/gemm_tiled.hpp): the
// product's form and element types, the tile sizes its tuning gives, the
// scratch layout that follows, and the small helpers every part uses (packs
// of V floats, a team's threads). Every part of the kernel (gemm_tiled_*.hpp)
// is a template over one TiledConfig.
#pragma once

#include <kernels/tuning.hpp>
#include <llmk/types.hpp>

#include <type_traits>

namespace llmk::kernels {

template <class Form, class ExecSpace, class TIn, class TD, class Epilogue, class TBias,
          class Tuning>
struct TiledConfig {
  using exec_space = ExecSpace;
  using in_type = TIn;
  using d_type = TD;
  using epilogue_type = Epilogue;
  using tuning = Tuning;
  // TBias void: no fused dbias (the pointer's type is then never used).
  static constexpr bool fuse_bias = !std::is_void_v<TBias>;
  using bias_type = std::conditional_t<fuse_bias, TBias, float>;
  using Policy = Kokkos::TeamPolicy<ExecSpace, Kokkos::IndexType<index_t>,
                                    typename Tuning::launch_bounds>;
  using Member = typename Policy::member_type;
  using Scratch = Kokkos::View<float*, typename ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  static constexpr bool trans_a = Form::trans_a, trans_b = Form::trans_b;
  static constexpr bool batched = Form::batched;

  static constexpr int TY = Tuning::team_size, TX = Tuning::vector_length, NT = TY * TX;
  static constexpr int TM = Tuning::tm, TN = Tuning::tn;
  static constexpr int BM = Tuning::bm, BN = Tuning::bn, BK = Tuning::bk;
  static constexpr int SM = TM * TY, SN = TN * TX;  // a sub-tile: one micro-tile per thread
  static constexpr int V = Tuning::vec;  // a thread's columns come in groups of V
  // Scratch (gemm_tiled_staging.hpp): op(A) as [BM/SM panels][BK][a_ld], op(B)
  // as [BN/SN panels][BK][b_ld]. A B transposed into scratch (TransB) is
  // stored as the non-transposed A is, one float per k, and gets A's padding
  // for the same bank conflicts (2-way rather than 4-way on a GPU).
  static constexpr int a_ld = SM + Tuning::a_pad;  // floats from k to k + 1 in an A panel
  static constexpr int b_ld = SN + (trans_b ? Tuning::a_pad : 0);
  static constexpr int a_panel = BK * a_ld, b_panel = BK * b_ld;
  static constexpr int a_floats = BM / SM * a_panel, b_floats = BN / SN * b_panel;
  static constexpr int stage_floats = a_floats + b_floats;  // one chunk's scratch buffer
  static constexpr int sum_floats = BM * BN;  // the host's tile of sums, when D cannot hold them
  static constexpr int align = 16;            // floats: 64 bytes, a cache line
  // One sub-tile per thread (GPU): acc lives in registers across all K chunks.
  static constexpr bool one_subtile = SM == BM && SN == BN;
  // Register tiles with float inputs may stage an operand through AsyncCopy
  // (two buffers); bf16 is widened on the way, through registers.
  static constexpr bool async_a =
      Tuning::template async_a<trans_a, trans_b> && std::is_same_v<TIn, float>;
  static constexpr bool async_b =
      Tuning::template async_b<trans_a, trans_b> && std::is_same_v<TIn, float>;
  static constexpr int k_unroll = Tuning::template k_unroll<trans_a, trans_b>;
  // Rows of a bias panel each thread sums (fuse_bias).
  static constexpr int bias_rows = (SM + NT - 1) / NT;

  static_assert(BM % SM == 0 && BN % SN == 0, "a tile must be whole sub-tiles");
  static_assert(TN % V == 0 && (V == 1 || (TM % V == 0 && a_ld % V == 0 && b_ld % V == 0 &&
                                           one_subtile)),
                "pack loads (vec > 1) are for register tiles of whole packs");
  static_assert(one_subtile || (NT == 1 && Tuning::stages == 1),
                "several sub-tiles per thread are for hosts: one thread per team, one buffer");
  static_assert(std::is_same_v<TIn, float> || std::is_same_v<TIn, bf16>, "inputs: float or bf16");
  static_assert(std::is_same_v<TD, float> || std::is_same_v<TD, bf16>, "D: float or bf16");
  static_assert(!fuse_bias || (trans_a && !trans_b && !batched),
                "the bias is fused into matmul's dweight product (TN, unbatched)");

  // V elements of TIn loaded at once (8 or 16 bytes on a GPU), and V floats.
  struct alignas(V * sizeof(TIn)) InPack {
    TIn v[V];
  };
  struct alignas(V * sizeof(float)) FloatPack {
    float v[V];
  };
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

  // f(ty, tx) on each thread of the team. Per-thread state declared outside
  // (acc) is private to a thread because a GPU runs each (ty, tx) on its own
  // thread and the host grid is 1 × 1.
  template <class F>
  KOKKOS_INLINE_FUNCTION static void for_each_thread(const Member& team, const F& f) {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, TY), [&](const int ty) {
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, TX), [&](const int tx) { f(ty, tx); });
    });
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

  KOKKOS_INLINE_FUNCTION static float* aligned(float* p) {
    const auto misalign = reinterpret_cast<std::uintptr_t>(p) % (align * sizeof(float));
    return misalign ? p + (align * sizeof(float) - misalign) / sizeof(float) : p;
  }
};

}  // namespace llmk::kernels
