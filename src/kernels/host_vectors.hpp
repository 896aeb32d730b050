// Vectors of floats for host loops whose sums must stay in registers
// (block_product.hpp's products, the tiled GEMM's host micro-kernel): GCC
// vectors of the target's width, 16 floats with AVX-512, 8 with AVX, else 4.
// Left to itself, GCC 12 vectorized such loops along k, kept the sums in
// memory or, from plain arrays of sums, spilled and permuted them (2 GFLOP/s
// on a Zen 4 core for a 64 × 64 × 64 tile of scores; 55 with the vectors).
// LLMK_HOST_VECTORS is 0 in device code and for other compilers: the callers
// keep a plain path.
#pragma once

#include <cstring>

#if (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDA_ARCH__)
#define LLMK_HOST_VECTORS 1
namespace llmk::kernels::detail {
#if defined(__AVX512F__)
inline constexpr int kLanes = 16, kRegisters = 32;
#elif defined(__AVX__)
inline constexpr int kLanes = 8, kRegisters = 16;
#else
inline constexpr int kLanes = 4, kRegisters = 16;
#endif
typedef float Floats __attribute__((vector_size(4 * kLanes)));
inline Floats load_floats(const float* p) {
  Floats v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store_floats(float* p, const Floats& v) { std::memcpy(p, &v, sizeof v); }
// x − 0 is x for every x (−0 included), so GCC folds it to a bare broadcast;
// 0 + x (−0 + 0 = +0) cost a scalar add before each broadcast.
inline Floats broadcast(const float x) { return x - Floats{}; }
}  // namespace llmk::kernels::detail
#else
#define LLMK_HOST_VECTORS 0
#endif
