// Elementwise maps, the kernels of the operations that compute each element
// of one output from the same element of one or two inputs:
//
//   out[i] ⟵ f(a[i])  or  f(a[i], b[i])
//
// in float (f is a functor of floats, e.g. GELU, or the residual's sum), one
// rounding into out (update.hpp: = or +=). Every element on its own: the
// same bits on every space, thread count and path.
//
//  - map_elements: a thread per element (the baseline, "naive");
//  - map_packed: on a GPU a thread per 16-byte pack of every array where all
//    of them are misaligned alike (pack.hpp's plan), the head and tail single
//    elements in the same launch; on a host blocks of elements, each a
//    vectorized loop (host_blocks.hpp). out may be a itself (in place): no
//    __restrict between them, each element read before it is written.
//
// With one input, b is nullptr and never read (B names its type only).
#pragma once

#include <kernels/host_blocks.hpp>
#include <kernels/pack.hpp>
#include <kernels/update.hpp>
#include <llmk/compat.hpp>
#include <llmk/types.hpp>

#include <type_traits>

namespace llmk::kernels {

template <class Out, class A, class B = A>
struct MapArrays {
  Out* out;
  const A* a;
  const B* b;  // nullptr with one input
  index_t n;
  bool overwrite;
};

template <class Out, class A>
MapArrays<Out, A> map_arrays(Out* out, const A* a, const index_t n, const bool overwrite) {
  return {out, a, nullptr, n, overwrite};
}
template <class Out, class A, class B>
MapArrays<Out, A, B> map_arrays(Out* out, const A* a, const B* b, const index_t n,
                                const bool overwrite) {
  return {out, a, b, n, overwrite};
}

// Whether f takes two inputs (else one).
template <class F>
inline constexpr bool takes_two = !std::is_invocable_v<F, float>;

// f of element i's inputs, in float.
template <class F, class Out, class A, class B>
KOKKOS_INLINE_FUNCTION float map_value(const F& f, const MapArrays<Out, A, B>& m, const index_t i) {
  if constexpr (takes_two<F>) {
    return f(to_float(m.a[i]), to_float(m.b[i]));
  } else {
    return f(to_float(m.a[i]));
  }
}

template <class ExecSpace, class F, class Out, class A, class B>
void map_elements(const char* label, const ExecSpace& exec, const F& f,
                  const MapArrays<Out, A, B>& m) {
  Kokkos::parallel_for(
      label, Range<ExecSpace>(exec, 0, m.n),
      KOKKOS_LAMBDA(const index_t i) { update(m.out[i], map_value(f, m, i), m.overwrite); });
}

// Elements [i0, i1) on a host thread: the loop GCC vectorizes.
template <class F, class Out, class A, class B>
inline void map_block(const F& f, const MapArrays<Out, A, B>& m, const index_t i0,
                      const index_t i1) {
  Out* const out = m.out;
  if (m.overwrite) {
    LLMK_SIMD
    for (index_t i = i0; i < i1; ++i) out[i] = from_float<Out>(map_value(f, m, i));
  } else {
    LLMK_SIMD
    for (index_t i = i0; i < i1; ++i)
      out[i] = from_float<Out>(to_float(out[i]) + map_value(f, m, i));
  }
}

template <class ExecSpace, class F, class Out, class A, class B>
void map_packs(const char* label, const ExecSpace& exec, const F& f,
               const MapArrays<Out, A, B>& m) {
  static_assert(sizeof(A) == sizeof(Out) && sizeof(B) == sizeof(Out),
                "every array's packs hold as many elements");
  using APack = PackOf<A, 16>;
  using BPack = PackOf<B, 16>;
  using OutPack = PackOfSize<Out, APack::size>;
  constexpr int size = APack::size;
  const PackPlan plan = takes_two<F> ? pack_plan<16, A>(m.n, {m.out, m.a, m.b})
                                     : pack_plan<16, A>(m.n, {m.out, m.a});
  const index_t head = plan.head, packs = plan.packs, tail = head + packs * size;
  // Items [0, packs) are packs; the rest the head's and the tail's elements.
  Kokkos::parallel_for(
      label, Range<ExecSpace>(exec, 0, packs + (m.n - packs * size)),
      KOKKOS_LAMBDA(const index_t i) {
        // nvcc's extended lambdas may not capture a variable first inside
        // an `if constexpr`: f and m are named here, before any.
        const F& fn = f;
        const MapArrays<Out, A, B>& arrays = m;
        if (i < packs) {
          const index_t e = head + i * size;
          const APack x = load_pack<APack>(arrays.a + e);
          BPack z{};
          if constexpr (takes_two<F>) z = load_pack<BPack>(arrays.b + e);
          OutPack y = arrays.overwrite ? OutPack{} : load_pack<OutPack>(arrays.out + e);
          for (int u = 0; u < size; ++u) {
            float v;
            if constexpr (takes_two<F>) {
              v = fn(x.get(u), z.get(u));
            } else {
              v = fn(x.get(u));
            }
            y.set(u, arrays.overwrite ? v : y.get(u) + v);
          }
          store_pack(arrays.out + e, y);
        } else {
          const index_t k = i - packs;
          const index_t j = k < head ? k : tail + (k - head);
          update(arrays.out[j], map_value(fn, arrays, j), arrays.overwrite);
        }
      });
}

template <class ExecSpace, class F, class Out, class A, class B>
void map_packed(const char* label, const ExecSpace& exec, const F& f,
                const MapArrays<Out, A, B>& m) {
  if constexpr (compat::is_host_space<ExecSpace>) {
    for_each_block(label, exec, m.n,
                   [=](const index_t i0, const index_t i1) { map_block(f, m, i0, i1); });
  } else {
    map_packs(label, exec, f, m);
  }
}

}  // namespace llmk::kernels
