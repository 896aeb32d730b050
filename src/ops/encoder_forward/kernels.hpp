// The encoder forward's kernels: out[m, :] ⟵ wte[tokens[m], :] + wpe[m % T, :]
// in float, one rounding into out (kernels/update.hpp). Every element on its
// own: the same bits on every space and thread count.
//
//  - encoder_forward_elements: a thread per element (the baseline);
//  - encoder_forward_packed: on a GPU a thread per 16 bytes of a row (llm.c's
//    encoder_forward3: one 128-bit load of wte's and wpe's rows and one store),
//    where C fills whole packs and the three arrays start on 16 bytes, else
//    elements; on a host a thread step per row, its channels a vectorized loop.
// A token outside [0, V) (a call that skipped the check) makes its row NaN;
// wte is read only at valid tokens.
#pragma once

#include <kernels/pack.hpp>
#include <kernels/tuning.hpp>  // LLMK_SIMD
#include <kernels/update.hpp>
#include <llmk/compat.hpp>
#include <llmk/types.hpp>

#include <cstdint>
#include <limits>

namespace llmk::op::encoder_forward {

template <class ExecSpace, class In, class Out>
struct Args {
  template <class T>
  using Matrix = Kokkos::View<T**, Kokkos::LayoutRight, typename ExecSpace::device_type,
                              Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Matrix<Out> out;       // M × C, M = B·T
  Matrix<const In> wte;  // V × C
  Matrix<const In> wpe;  // T × C
  Kokkos::View<const int*, Kokkos::LayoutRight, typename ExecSpace::device_type,
               Kokkos::MemoryTraits<Kokkos::Unmanaged>>
      tokens;  // M
  index_t T = 0;
  bool overwrite_out = true;
  bool check_tokens = true;  // EncoderForwardOptions::check_tokens
};

KOKKOS_INLINE_FUNCTION float quiet_nan() { return std::numeric_limits<float>::quiet_NaN(); }

template <class A>
KOKKOS_INLINE_FUNCTION bool valid_token(const A& a, const int token) {
  return token >= 0 && index_t(token) < index_t(a.wte.extent(0));
}

template <class ExecSpace, class A>
void encoder_forward_elements(const ExecSpace& exec, const A& a) {
  const index_t C = index_t(a.out.extent(1));
  Kokkos::parallel_for(
      "llmk::encoder_forward_elements", Range<ExecSpace>(exec, 0, index_t(a.out.extent(0)) * C),
      KOKKOS_LAMBDA(const index_t i) {
        const index_t m = i / C, c = i % C;
        const int token = a.tokens(m);
        const float x = valid_token(a, token)
                            ? to_float(a.wte(token, c)) + to_float(a.wpe(m % a.T, c))
                            : quiet_nan();
        kernels::update(a.out(m, c), x, a.overwrite_out);
      });
}

// Row m on a host thread: the same float operations as the elements'.
template <class In, class Out>
inline void encoder_forward_row(Out* __restrict out, const In* __restrict wte_row,
                                const In* __restrict wpe_row, const index_t C,
                                const bool overwrite) {
  if (overwrite) {
    LLMK_SIMD
    for (index_t c = 0; c < C; ++c)
      out[c] = from_float<Out>(to_float(wte_row[c]) + to_float(wpe_row[c]));
  } else {
    LLMK_SIMD
    for (index_t c = 0; c < C; ++c)
      out[c] = from_float<Out>(to_float(out[c]) + (to_float(wte_row[c]) + to_float(wpe_row[c])));
  }
}

template <class ExecSpace, class A>
void encoder_forward_rows(const ExecSpace& exec, const A& a) {
  Kokkos::parallel_for(
      "llmk::encoder_forward_rows", Range<ExecSpace>(exec, 0, index_t(a.out.extent(0))),
      [=](const index_t m) {
        const index_t C = index_t(a.out.extent(1));
        const int token = a.tokens(m);
        if (!valid_token(a, token)) {
          for (index_t c = 0; c < C; ++c)
            kernels::update(a.out(m, c), quiet_nan(), a.overwrite_out);
          return;
        }
        encoder_forward_row(&a.out(m, 0), &a.wte(token, 0), &a.wpe(m % a.T, 0), C,
                            a.overwrite_out);
      });
}

// Whether p's rows are whole 16-byte packs of all three arrays.
template <class A>
bool rows_are_packs(const A& a) {
  using In = typename decltype(a.wte)::non_const_value_type;
  constexpr int size = kernels::PackOf<In, 16>::size;
  const auto aligned = [](const void* p) { return std::uintptr_t(p) % 16 == 0; };
  return index_t(a.out.extent(1)) % size == 0 && aligned(a.out.data()) &&
         aligned(a.wte.data()) && aligned(a.wpe.data());
}

// Index: the type of the pack's position arithmetic. A flat index's
// division by the packs a row is a 64-bit division in index_t, tens of
// instructions on a GPU; in 32 bits where the packs fit (any GPT-2 call).
template <class Index, class ExecSpace, class A>
void encoder_forward_packs(const ExecSpace& exec, const A& a) {
  using In = typename decltype(a.wte)::non_const_value_type;
  using Out = typename decltype(a.out)::value_type;
  using InPack = kernels::PackOf<In, 16>;
  using OutPack = kernels::PackOfSize<Out, InPack::size>;
  constexpr int size = InPack::size;
  const Index packs_a_row = Index(a.out.extent(1) / size), T = Index(a.T);
  Kokkos::parallel_for(
      "llmk::encoder_forward_packed",
      Range<ExecSpace>(exec, 0, index_t(a.out.extent(0)) * index_t(packs_a_row)),
      KOKKOS_LAMBDA(const index_t i) {
        const Index m = Index(i) / packs_a_row, c = Index(i) % packs_a_row * size;
        const int token = a.tokens(m);
        Out* const out = &a.out(m, c);
        OutPack y = a.overwrite_out ? OutPack{} : kernels::load_pack<OutPack>(out);
        if (valid_token(a, token)) {
          const InPack e = kernels::load_pack<InPack>(&a.wte(token, c));
          const InPack p = kernels::load_pack<InPack>(&a.wpe(m % T, c));
          for (int u = 0; u < size; ++u) {
            const float x = e.get(u) + p.get(u);
            y.set(u, a.overwrite_out ? x : y.get(u) + x);
          }
        } else {
          for (int u = 0; u < size; ++u) y.set(u, quiet_nan());
        }
        kernels::store_pack(out, y);
      });
}

template <class ExecSpace, class A>
void encoder_forward_packed(const ExecSpace& exec, const A& a) {
  if constexpr (compat::is_host_space<ExecSpace>) {
    encoder_forward_rows(exec, a);
  } else if (rows_are_packs(a)) {
    // (every extent fits when the packs do: each is at most the count of elements)
    if (a.out.extent(0) * a.out.extent(1) < (std::size_t(1) << 32))
      encoder_forward_packs<std::uint32_t>(exec, a);
    else
      encoder_forward_packs<index_t>(exec, a);
  } else {
    encoder_forward_elements(exec, a);
  }
}

}  // namespace llmk::op::encoder_forward
