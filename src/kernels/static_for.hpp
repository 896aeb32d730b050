// static_for<N>(f): f(0), ..., f(N − 1) with compile-time trip count, as a
// fold over a parameter pack, so that the compilers unroll it whatever f's
// size: arrays indexed by the argument stay in registers on a GPU (nvcc
// moves an array it indexes at run time to local memory).
#pragma once

#include <Kokkos_Macros.hpp>

#include <utility>

namespace llmk::kernels {

template <class F, int... I>
KOKKOS_INLINE_FUNCTION void static_for(const F& f, std::integer_sequence<int, I...>) {
  (f(I), ...);
}
template <int N, class F>
KOKKOS_INLINE_FUNCTION void static_for(const F& f) {
  static_for(f, std::make_integer_sequence<int, N>{});
}

}  // namespace llmk::kernels
