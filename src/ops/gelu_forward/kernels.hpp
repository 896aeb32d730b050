// The GELU forward's kernels: out[i] ⟵ gelu(inp[i]) in float
// (kernels/gelu.hpp), one rounding into out (kernels/update.hpp). Every
// element on its own: the same bits on every space and thread count.
//
//  - gelu_forward_elements: a thread per element (the baseline);
//  - gelu_forward_packed: on a GPU a thread per 16-byte pack of inp and out
//    where both are misaligned alike (kernels/pack.hpp's plan), the head and
//    tail single elements in the same launch; on a host blocks of elements,
//    each a vectorized loop (host_blocks.hpp). gelu_backward's, one input.
#pragma once

#include <kernels/gelu.hpp>
#include <kernels/host_blocks.hpp>
#include <kernels/pack.hpp>
#include <kernels/update.hpp>
#include <llmk/compat.hpp>
#include <llmk/types.hpp>

namespace llmk::op::gelu_forward {

template <class ExecSpace, class In, class Out>
struct Args {
  template <class T>
  using Vector = Kokkos::View<T*, Kokkos::LayoutRight, typename ExecSpace::device_type,
                              Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Vector<Out> out;
  Vector<const In> inp;
  bool overwrite_out = true;
};

// One element: the packs' and the blocks' float operations, so that every
// path agrees bit for bit.
template <class A>
KOKKOS_INLINE_FUNCTION void gelu_forward_element(const A& a, const index_t i) {
  kernels::update(a.out(i), kernels::gelu(to_float(a.inp(i))), a.overwrite_out);
}

template <class ExecSpace, class A>
void gelu_forward_elements(const ExecSpace& exec, const A& a) {
  Kokkos::parallel_for(
      "llmk::gelu_forward_elements", Range<ExecSpace>(exec, 0, index_t(a.out.extent(0))),
      KOKKOS_LAMBDA(const index_t i) { gelu_forward_element(a, i); });
}

// Elements [i0, i1) on a host thread. out may be inp (in place): no
// __restrict between them; each element is read before it is written.
template <class In, class Out>
inline void gelu_forward_block(Out* out, const In* inp, const index_t i0, const index_t i1,
                               const bool overwrite) {
  using kernels::gelu;
  if (overwrite) {
    LLMK_SIMD
    for (index_t i = i0; i < i1; ++i) out[i] = from_float<Out>(gelu(to_float(inp[i])));
  } else {
    LLMK_SIMD
    for (index_t i = i0; i < i1; ++i)
      out[i] = from_float<Out>(to_float(out[i]) + gelu(to_float(inp[i])));
  }
}

template <class ExecSpace, class A>
void gelu_forward_packs(const ExecSpace& exec, const A& a) {
  using In = typename decltype(a.inp)::non_const_value_type;
  using Out = typename decltype(a.out)::value_type;
  static_assert(sizeof(In) == sizeof(Out), "out's packs hold as many elements as inp's");
  using InPack = kernels::PackOf<In, 16>;
  using OutPack = kernels::PackOfSize<Out, InPack::size>;
  constexpr int size = InPack::size;
  const index_t N = index_t(a.out.extent(0));
  const kernels::PackPlan plan = kernels::pack_plan<16, In>(N, {a.out.data(), a.inp.data()});
  const index_t head = plan.head, packs = plan.packs, tail = head + packs * size;
  const In* const inp = a.inp.data();
  Out* const out = a.out.data();
  const bool overwrite = a.overwrite_out;
  // Items [0, packs) are packs; the rest the head's and the tail's elements.
  Kokkos::parallel_for(
      "llmk::gelu_forward_packed", Range<ExecSpace>(exec, 0, packs + (N - packs * size)),
      KOKKOS_LAMBDA(const index_t i) {
        if (i < packs) {
          const index_t e = head + i * size;
          const InPack x = kernels::load_pack<InPack>(inp + e);
          OutPack y = overwrite ? OutPack{} : kernels::load_pack<OutPack>(out + e);
          for (int u = 0; u < size; ++u) {
            const float g = kernels::gelu(x.get(u));
            y.set(u, overwrite ? g : y.get(u) + g);
          }
          kernels::store_pack(out + e, y);
        } else {
          const index_t k = i - packs;
          gelu_forward_element(a, k < head ? k : tail + (k - head));
        }
      });
}

template <class ExecSpace, class A>
void gelu_forward_packed(const ExecSpace& exec, const A& a) {
  if constexpr (compat::is_host_space<ExecSpace>) {
    const auto* const inp = a.inp.data();
    auto* const out = a.out.data();
    const bool overwrite = a.overwrite_out;
    kernels::for_each_block("llmk::gelu_forward_blocks", exec, index_t(a.out.extent(0)),
                            [=](const index_t i0, const index_t i1) {
                              gelu_forward_block(out, inp, i0, i1, overwrite);
                            });
  } else {
    gelu_forward_packs(exec, a);
  }
}

}  // namespace llmk::op::gelu_forward
