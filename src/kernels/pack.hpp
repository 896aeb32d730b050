// 8 or 16 bytes of float or bf16 moved as one load or store (the layernorm
// rows kernel's and attention's T × T rows'), element by element as float.
#pragma once

#include <Kokkos_Core.hpp>
#include <llmk/bf16.hpp>

#include <llmk/types.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <type_traits>

namespace llmk::kernels {

// A pack: Bytes (8 or 16) of float or bf16 as 32-bit words, element u as a
// float (get) or set from one (rounded once). bf16 elements stay two to a
// word: as an array of bf16, nvcc kept each in a 32-bit register of its
// own (255 registers and a stack frame for 4 packs a lane).
template <class T, int Bytes>
struct alignas(Bytes) PackOf {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, bf16>, "float or bf16");
  static_assert(Bytes == 8 || Bytes == 16, "8- or 16-byte packs");
  static constexpr int size = int(Bytes / sizeof(T));
  std::uint32_t word[Bytes / 4];

  KOKKOS_INLINE_FUNCTION float get(const int u) const {
    std::uint32_t bits;
    if constexpr (std::is_same_v<T, bf16>) {
      bits = u % 2 == 0 ? word[u / 2] << 16 : word[u / 2] & 0xffff0000u;
    } else {
      bits = word[u];
    }
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }
  KOKKOS_INLINE_FUNCTION void set(const int u, const float f) {
    if constexpr (std::is_same_v<T, bf16>) {
      const std::uint32_t b = bf16(f).bits;
      std::uint32_t& w = word[u / 2];
      w = u % 2 == 0 ? (w & 0xffff0000u) | b : (w & 0x0000ffffu) | (b << 16);
    } else {
      std::memcpy(&word[u], &f, sizeof f);
    }
  }
};

// A pack of `size` elements of T (4 floats: 16 bytes; 4 bf16: 8 bytes).
template <class T, int size>
using PackOfSize = PackOf<T, int(size * sizeof(T))>;

template <class Pack, class T>
KOKKOS_INLINE_FUNCTION Pack load_pack(const T* p) {
  return *reinterpret_cast<const Pack*>(p);
}
template <class Pack, class T>
KOKKOS_INLINE_FUNCTION void store_pack(T* p, const Pack& v) {
  *reinterpret_cast<Pack*>(p) = v;
}

// Where packs of Bytes bytes lie in n elements of T that several arrays hold
// alike (an elementwise kernel's inputs and output): elements [head, head +
// packs·size), the head before the first pack boundary and the tail after
// the last whole pack left to single elements. None unless every array is
// misaligned alike (the usual case: all aligned).
struct PackPlan {
  index_t head = 0, packs = 0;
};

template <int Bytes, class T>
PackPlan pack_plan(const index_t n, std::initializer_list<const void*> arrays) {
  const auto offset = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % Bytes; };
  const std::uintptr_t o = offset(*arrays.begin());
  if (o % sizeof(T) != 0) return {};
  for (const void* a : arrays)
    if (offset(a) != o) return {};
  PackPlan plan;
  plan.head = std::min<index_t>(n, index_t((Bytes - o) % Bytes / sizeof(T)));
  plan.packs = (n - plan.head) / index_t(Bytes / sizeof(T));
  return plan;
}

}  // namespace llmk::kernels
