// Element types on CUDA, for the .cpp files of backends/cublas/ (CUDA builds):
// as cuBLAS names them, and in 16-byte packs for vector loads and stores.
#pragma once

#include <llmk/bf16.hpp>

#include <library_types.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace llmk::backends {

// llmk::bf16 has __nv_bfloat16's layout (bf16.hpp): CUDA_R_16BF.
template <class T>
constexpr cudaDataType_t cuda_type() {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, bf16>, "float or llmk::bf16");
  return std::is_same_v<T, float> ? CUDA_R_32F : CUDA_R_16BF;
}

// Bytes of an element of type t (CUDA_R_32F or CUDA_R_16BF).
inline std::size_t element_bytes(cudaDataType_t t) { return t == CUDA_R_32F ? 4 : 2; }

// 16 bytes of T: one vector load or store.
template <class T>
struct alignas(16) Pack16 {
  static constexpr int size = int(16 / sizeof(T));
  T v[size];
};

inline bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

}  // namespace llmk::backends
