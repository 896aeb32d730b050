// The GELU backward kernels (ops/gelu_backward/ has the operation):
//   dinp[i] ⟵ gelu'(inp[i]) · dout[i]
// gelu' in float (kernels/gelu.hpp, the one matmul_backward fuses), one
// rounding into dinp (kernels/update.hpp). Every element on its own: no
// sums, the same bits on every space and thread count.
//
//  - gelu_backward_elements: a thread per element (the baseline);
//  - gelu_backward_packed: a thread per 16-byte pack of dout, inp and dinp
//    (4 floats, 8 bf16: one load of each array, one store), where the three
//    arrays are equally misaligned (the usual case: all aligned) after a head
//    of elements before the first pack boundary; the head and the tail past
//    the last whole pack are single elements, in the same launch. Arrays of
//    different alignments run element by element. On host spaces it runs
//    blocks of elements instead, each a vectorized loop (host_blocks.hpp):
//    packs are a GPU's way to move 16 bytes a load.
#pragma once

#include <kernels/gelu.hpp>
#include <kernels/host_blocks.hpp>
#include <kernels/pack.hpp>
#include <kernels/update.hpp>
#include <llmk/compat.hpp>
#include <llmk/types.hpp>

namespace llmk::kernels {

template <class ExecSpace, class In, class DInp>
struct GeluBackwardArgs {
  template <class T>
  using Vector = Kokkos::View<T*, Kokkos::LayoutRight, typename ExecSpace::device_type,
                              Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Vector<DInp> dinp;
  Vector<const In> dout, inp;
  bool overwrite_dinp = false;
};

// One element: the scalar path of both kernels (the same float operations as
// a pack's element, so a thread's element and a pack's agree bit for bit).
template <class Args>
KOKKOS_INLINE_FUNCTION void gelu_backward_element(const Args& a, const index_t i) {
  update(a.dinp(i), gelu_grad(to_float(a.inp(i))) * to_float(a.dout(i)), a.overwrite_dinp);
}

template <class ExecSpace, class Args>
void gelu_backward_elements(const ExecSpace& exec, const Args& a) {
  Kokkos::parallel_for(
      "llmk::gelu_backward_elements", Range<ExecSpace>(exec, 0, index_t(a.dinp.extent(0))),
      KOKKOS_LAMBDA(const index_t i) { gelu_backward_element(a, i); });
}

// Elements [i0, i1) on a host thread, a loop the compiler vectorizes: the
// float operations of gelu_backward_element. dinp may be dout (the call in
// place): no __restrict between them; each element is read before it is
// written, and LLMK_SIMD vectorizes the loop without an overlap check.
template <class In, class DInp>
inline void gelu_backward_block(DInp* dinp, const In* dout, const In* __restrict inp,
                                const index_t i0, const index_t i1, const bool overwrite) {
  if (overwrite) {
    LLMK_SIMD
    for (index_t i = i0; i < i1; ++i)
      dinp[i] = from_float<DInp>(gelu_grad(to_float(inp[i])) * to_float(dout[i]));
  } else {
    LLMK_SIMD
    for (index_t i = i0; i < i1; ++i)
      dinp[i] =
          from_float<DInp>(to_float(dinp[i]) + gelu_grad(to_float(inp[i])) * to_float(dout[i]));
  }
}

template <class ExecSpace, class Args>
void gelu_backward_packs(const ExecSpace& exec, const Args& a) {
  using In = typename decltype(a.dout)::non_const_value_type;
  using DInp = typename decltype(a.dinp)::value_type;
  constexpr int kBytes = 16;
  using InPack = PackOf<In, kBytes>;
  using OutPack = PackOfSize<DInp, InPack::size>;
  constexpr int size = InPack::size;
  static_assert(sizeof(In) == sizeof(DInp), "dinp's packs hold as many elements as dout's");
  const index_t N = index_t(a.dinp.extent(0));
  const PackPlan plan = pack_plan<kBytes, In>(N, {a.dinp.data(), a.dout.data(), a.inp.data()});
  const index_t head = plan.head, packs = plan.packs;
  const index_t tail = head + packs * size;  // the first element past the packs
  const In* const dout = a.dout.data();
  const In* const inp = a.inp.data();
  DInp* const dinp = a.dinp.data();
  const bool overwrite = a.overwrite_dinp;
  // Items [0, packs) are packs; the rest the head's and the tail's elements.
  Kokkos::parallel_for(
      "llmk::gelu_backward_packed", Range<ExecSpace>(exec, 0, packs + (N - packs * size)),
      KOKKOS_LAMBDA(const index_t i) {
        if (i < packs) {
          const index_t e = head + i * size;
          const InPack d = load_pack<InPack>(dout + e), x = load_pack<InPack>(inp + e);
          OutPack out = overwrite ? OutPack{} : load_pack<OutPack>(dinp + e);
          for (int u = 0; u < size; ++u) {
            const float g = gelu_grad(x.get(u)) * d.get(u);
            out.set(u, overwrite ? g : out.get(u) + g);
          }
          store_pack(dinp + e, out);
        } else {
          const index_t k = i - packs;
          gelu_backward_element(a, k < head ? k : tail + (k - head));
        }
      });
}

// Packs on a GPU, blocks on a host.
template <class ExecSpace, class Args>
void gelu_backward_packed(const ExecSpace& exec, const Args& a) {
  if constexpr (compat::is_host_space<ExecSpace>) {
    const auto* const dout = a.dout.data();
    const auto* const inp = a.inp.data();
    auto* const dinp = a.dinp.data();
    const bool overwrite = a.overwrite_dinp;
    for_each_block("llmk::gelu_backward_blocks", exec, index_t(a.dinp.extent(0)),
                   [=](const index_t i0, const index_t i1) {
                     gelu_backward_block(dinp, dout, inp, i0, i1, overwrite);
                   });
  } else {
    gelu_backward_packs(exec, a);
  }
}

}  // namespace llmk::kernels
