// How the tiled GEMM (kernels/gemm_tiled.hpp) stages a K chunk of an operand
// in team scratch, as float (bf16 is widened there), zero-filled outside the
// matrix. Both operands are staged alike: a chunk is BK of its k by Extent of
// its other index x (op(A): x = r, a row of D, Extent = BM; op(B): x = n, a
// column of D, Extent = BN), laid out as [Extent / Width panels][BK][Ld]:
// (x, k) at (x / Width · BK + k) · Ld + x % Width (op(A): Width = SM, Ld =
// a_ld; op(B): SN, b_ld), so that a thread's micro-kernel reads its rows or
// columns at one k from one scratch row. On a host a panel is exactly what one
// micro-kernel reads, a contiguous block that stays in L1; on a GPU there is
// one panel. In memory an operand is either
//  - k-major, (x, k) at data[k·ld + x]: op(A) = Aᵀ (TransA: dweight's dout),
//    op(B) = B (matmul's weight and inp): copied along scratch rows, in
//    16-byte packs (or 16-byte cp.async) where aligned; or
//  - x-major, (x, k) at data[x·ld + k]: op(A) = A (dinp's dout), op(B) = Bᵀ
//    (TransB: attention's vᵀ): transposed into scratch, 16-byte loads along k
//    where aligned, then one 4-byte store per k (or 4-byte cp.asyncs).
#pragma once

#include <kernels/async_copy.hpp>
#include <kernels/gemm_tiled_config.hpp>

#include <cstdint>
#include <type_traits>

namespace llmk::kernels {

enum class GemmOperandRole { A, B };

template <class C, GemmOperandRole Role>
struct StagedOperand {
  using TIn = typename C::in_type;
  using InPack = typename C::InPack;
  static constexpr bool is_a = Role == GemmOperandRole::A;
  static constexpr bool k_major = is_a ? C::trans_a : !C::trans_b;
  static constexpr int extent = is_a ? C::BM : C::BN;
  static constexpr int width = is_a ? C::SM : C::SN;
  static constexpr int ld = is_a ? C::a_ld : C::b_ld;
  static constexpr int panel = is_a ? C::a_panel : C::b_panel;
  static constexpr int offset = is_a ? 0 : C::a_floats;  // within a chunk's scratch buffer
  static constexpr int BK = C::BK, V = C::V, NT = C::NT;

  // The operand's matrix for a team (one product of a batch): its data and
  // leading dimension, its x extent (op(A)'s rows, op(B)'s columns) and depth
  // K, and whether its rows can be loaded in packs of V (aligned start, ld a
  // multiple of V).
  struct Source {
    const TIn* data;
    index_t ld, extent, depth;
    bool packed;
  };

  static bool whole_packs(const TIn* data, const index_t ld) {
    return V > 1 && reinterpret_cast<std::uintptr_t>(data) % sizeof(InPack) == 0 && ld % V == 0;
  }

  // ---- register tiles: a thread's share of a chunk, through registers -----
  // Element e = tid + q·NT of the chunk's packs: Extent × BK, in packs of V
  // along the matrix's contiguous dimension.
  static constexpr int packs = extent * BK / V / NT;
  static_assert(packs * V * NT == extent * BK,
                "the team's threads must split a chunk into whole packs");
  struct Packs {
    InPack p[packs > 0 ? packs : 1];
  };

  // Where pack e of the chunk is: (k, x) of its first element; its V
  // elements run along x (k-major) or along k.
  KOKKOS_INLINE_FUNCTION static void pack_at(const int e, int& k, int& x) {
    if constexpr (k_major) {
      k = e / (extent / V), x = e % (extent / V) * V;
    } else {
      x = e / (BK / V), k = e % (BK / V) * V;
    }
  }

  // f(q, k, x, p, whole, in) for the thread's packs q of the chunk at k0 (x
  // from x0): (k, x) the place of its first element in the chunk, p its
  // address, whole: its V elements loadable at once (aligned rows, the chunk
  // inside the matrix), in(u): element u lies inside the matrix.
  template <class F>
  KOKKOS_INLINE_FUNCTION static void for_each_pack(const Source& s, const int tid,
                                                   const index_t k0, const index_t x0,
                                                   const F& f) {
    const bool whole = s.packed && k0 + BK <= s.depth && x0 + extent <= s.extent;
    for (int q = 0; q < packs; ++q) {
      int k, x;
      pack_at(tid + q * NT, k, x);
      const index_t gk = k0 + k, gx = x0 + x;
      auto in = [&](const int u) {
        return whole || (k_major ? gk < s.depth && gx + u < s.extent
                                 : gx < s.extent && gk + u < s.depth);
      };
      f(q, k, x, k_major ? s.data + gk * s.ld + gx : s.data + gx * s.ld + gk, whole, in);
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

  KOKKOS_INLINE_FUNCTION static void fetch(Packs& f, const Source& s, const int tid,
                                           const index_t k0, const index_t x0) {
    for_each_pack(s, tid, k0, x0, [&](int q, int, int, const TIn* p, bool whole, auto in) {
      load_pack(f.p[q], p, whole, in);
    });
  }

  // The fetched packs into a chunk's scratch buffer as floats (bf16 widened):
  // along a scratch row in one store (k-major), or one float per k.
  KOKKOS_INLINE_FUNCTION static void store(const Packs& f, const int tid, float* const buf) {
    float* const s = buf + offset;
    for (int q = 0; q < packs; ++q) {
      int k, x;
      pack_at(tid + q * NT, k, x);
      float v[V];
      for (int u = 0; u < V; ++u) v[u] = to_float(f.p[q].v[u]);
      if constexpr (k_major) {
        C::store_floats(s + k * ld + x, v);
      } else {
        for (int u = 0; u < V; ++u) s[(k + u) * ld + x] = v[u];
      }
    }
  }

  // Register tiles, async_a / async_b: the thread's share of chunk k0 copied
  // into a chunk's buffer by AsyncCopy, 16 bytes where the rows allow (k-major,
  // aligned, the chunk inside), else 4 with zeros outside the matrix (an
  // x-major operand one float per k, transposed).
  KOKKOS_INLINE_FUNCTION static void copy_async(const Source& s, const int tid, const index_t k0,
                                                const index_t x0, float* const buf) {
    float* const dst0 = buf + offset;
    for_each_pack(s, tid, k0, x0, [&](int, int k, int x, const TIn* p, bool whole, auto in) {
      if (k_major && whole) {
        AsyncCopy::copy<16>(dst0 + k * ld + x, p, true);
      } else {
        for (int u = 0; u < V; ++u) {
          float* const dst = k_major ? dst0 + k * ld + x + u : dst0 + (k + u) * ld + x;
          AsyncCopy::copy<4>(dst, in(u) ? p + u : s.data, in(u));
        }
      }
    });
  }

  // ---- host: the whole chunk by one thread ----------------------------------
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

  // g(scratch offset, x, k) for each element of the chunk, walked along the
  // matrix's contiguous dimension.
  template <class G>
  KOKKOS_INLINE_FUNCTION static void walk(const int tid, const G& g) {
    if constexpr (k_major) {
      block_loop<BK, extent / width, width>(tid, [&](int k, int p, int c) {
        g((p * BK + k) * ld + c, p * width + c, k);
      });
    } else {  // transposed into scratch
      block_loop<extent, 1, BK>(tid, [&](int x, int, int k) {
        g((x / width * BK + k) * ld + x % width, x, k);
      });
    }
  }

  // Element (x, k) as float; 0 outside the matrix unless Inside says the
  // whole chunk is inside (then there are no bounds checks and the host's
  // copy loops vectorize, bf16 widening included).
  template <bool Inside>
  KOKKOS_INLINE_FUNCTION static float at(const Source& s, const index_t x, const index_t k) {
    if (!Inside && (x >= s.extent || k >= s.depth)) return 0.0f;
    return to_float(k_major ? s.data[k * s.ld + x] : s.data[x * s.ld + k]);
  }

  // The thread's share of chunk k0 (x from x0) into buf, Inside as at().
  template <bool Inside>
  KOKKOS_INLINE_FUNCTION static void stage(const Source& s, const int tid, const index_t k0,
                                           const index_t x0, float* const buf) {
    float* const dst = buf + offset;
    walk(tid, [&](int off, int x, int k) { dst[off] = at<Inside>(s, x0 + x, k0 + k); });
  }

  // Host (exact_k): stages what the tile's sub-tiles read and no more: the
  // chunk's `depth` k within K and the `panels` × Width x that cover the
  // matrix (zeros past its edge). Runs along contiguous memory, which GCC
  // vectorizes (bf16 widening included).
  KOKKOS_INLINE_FUNCTION static void stage_exact(const Source& s, float* const buf,
                                                 const index_t k0, const int depth,
                                                 const index_t x0, const int panels) {
    float* const dst0 = buf + offset;
    if constexpr (k_major) {
      for (int k = 0; k < depth; ++k)
        stage_row(dst0 + k * ld, s.data + (k0 + k) * s.ld + x0, panels, width, panel,
                  s.extent - x0);
    } else {  // transposed into scratch
      for (int x = 0; x < panels * width; ++x) {
        float* const dst = dst0 + x / width * panel + x % width;
        if (x < s.extent - x0) {
          const TIn* const src = s.data + (x0 + x) * s.ld + k0;
          for (int k = 0; k < depth; ++k) dst[k * ld] = to_float(src[k]);
        } else {
          for (int k = 0; k < depth; ++k) dst[k * ld] = 0.0f;
        }
      }
    }
  }

  // dst[p·stride + c] = src[p·w + c] for the `panels` panels of w elements,
  // 0 from element `valid` of src on.
  KOKKOS_INLINE_FUNCTION static void stage_row(float* dst, const TIn* src, const int panels,
                                               const int w, const int stride,
                                               const index_t valid) {
    for (int p = 0; p < panels; ++p, dst += stride, src += w) {
      const index_t left = valid - index_t(p) * w;
      const int n = left >= w ? w : left > 0 ? int(left) : 0;
      for (int c = 0; c < n; ++c) dst[c] = to_float(src[c]);
      for (int c = n; c < w; ++c) dst[c] = 0.0f;
    }
  }
};

}  // namespace llmk::kernels
