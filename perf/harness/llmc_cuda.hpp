// What the llm.c-style CUDA peers (perf/<op>/peers_llmc_cuda.cpp) share:
// float ⇄ element conversions in device code (bf16 rounded to nearest even,
// as llm.c), a 16-byte vector of elements (llm.c's x128), and the check of a
// CUDA call, its message naming the peer.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace llmk::perf::llmc {

__device__ inline float widen(float x) { return x; }
__device__ inline float widen(__nv_bfloat16 x) { return __bfloat162float(x); }
template <class T>
__device__ inline T narrow(float x);
template <>
__device__ inline float narrow<float>(float x) {
  return x;
}
template <>
__device__ inline __nv_bfloat16 narrow<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

// 16 bytes of T: one load or store of `raw`, elements `e`.
template <class T>
union Vec16 {
  static constexpr int size = 16 / int(sizeof(T));
  int4 raw;
  T e[size];
};

// Throws "llmk-perf (<peer>): <what>: <CUDA's message>" unless err is success.
inline void check(cudaError_t err, const char* peer, const char* what) {
  if (err != cudaSuccess)
    throw std::runtime_error(std::string("llmk-perf (") + peer + "): " + what + ": " +
                             cudaGetErrorString(err));
}

}  // namespace llmk::perf::llmc
