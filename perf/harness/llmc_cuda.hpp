// What the llm.c-style CUDA peers (perf/<op>/peers_llmc_cuda.cpp) share:
// float ⇄ element conversions in device code (bf16 rounded to nearest even,
// as llm.c), a 16-byte vector of elements (llm.c's x128), the check of a
// CUDA call, its message naming the peer, the element type of a precision,
// and the peer's entry in its operation's list.
#pragma once

#include "peer_list.hpp"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

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

// f(T()) with T the element type of precision p: float for "fp32",
// __nv_bfloat16 for "bf16"; std::invalid_argument for another.
template <class F>
void with_element_type(const std::string& p, const char* peer, F&& f) {
  if (p == "fp32")
    f(float());
  else if (p == "bf16")
    f(__nv_bfloat16());
  else
    throw std::invalid_argument(std::string("llmk-perf (") + peer + "): no precision " + p);
}

// The peer "llmc-style" on Cuda in fp32 and bf16, the comparison of its
// operation's rows.
template <class Args, class Run>
std::vector<Peer<Args>> llmc_style_peer(Run run, std::string description) {
  Peer<Args> p;
  p.name = "llmc-style";
  p.backends = {"Cuda"};
  p.precisions = {"fp32", "bf16"};
  p.run = std::move(run);
  p.comparison = true;
  p.description = std::move(description);
  return {p};
}

}  // namespace llmk::perf::llmc
