// llmc-style: the layernorm backward as llm.c trains GPT-2 on a GPU (the idea
// of its layernorm_backward_kernel10, llmc/layernorm.cuh), written here from
// the algorithm — independent of llmk and not copied from llm.c. One kernel:
//  - a fixed grid of 2 blocks per multiprocessor (fewer when there are fewer
//    rows), 16 warps a block; each warp takes one row at a time, the block
//    16 consecutive rows per round, the grid's rounds striding through M;
//  - a warp reads its row twice in 16-byte vectors (4 float, 8 bf16 per
//    lane): first for the row's two means, mean_c(dnorm) and
//    mean_c(dnorm ⊙ norm) (dnorm = dout ⊙ weight, norm = (inp − mean)·rstd,
//    reduced with warp shuffles), then to write dinp (+= the old value, or =
//    with --overwrite-dinp, as llm.c's zero_dinp_old) and its row's terms of
//    dweight (dout ⊙ norm) and dbias (dout);
//  - those terms are summed over the block in float: per chunk of columns
//    each warp stages its terms in shared memory and the block's threads add
//    the 16 warps' terms column by column, in warp order, to the block's
//    float partial sums (shared memory, C each for dweight and dbias);
//  - at the end each block writes its partial sums to a float scratch buffer
//    (blocks × 2 × C), and the last block to finish — an atomic counter —
//    adds them in block order to dweight and dbias (+=, one rounding), and
//    sets the counter back to 0 for the next call.
// No floating-point atomics and fixed orders: bitwise reproducible, as
// llm.c's. Where it differs from llm.c (our choices): norm is computed from
// inp, mean and rstd rather than mean_c(dnorm ⊙ inp) corrected afterwards;
// the counter resets itself rather than being cleared by a memset before
// each call; C need not be a multiple of the vector width (a scalar path).
#include "../harness/llmc_cuda.hpp"
#include "peers.hpp"

#include <Kokkos_Core.hpp>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace llmk::perf::layernorm_backward {
namespace {

void check(cudaError_t err, const char* what) { llmc::check(err, "layernorm llmc-style", what); }

constexpr int kWarp = 32;
constexpr int kWarps = 16;  // per block: 512 threads, as llm.c
constexpr int kThreads = kWarp * kWarps;
constexpr int kBlocksPerSM = 2;
template <class T>
constexpr int kVec = 16 / int(sizeof(T));  // elements per 16-byte access
template <class T>
constexpr int kChunk = kWarp * kVec<T>;  // the columns a warp covers in one step

using llmc::narrow;
using llmc::widen;

// v[0..V) = p[0..V) widened: one 16-byte load (Vectorized: p aligned and all
// V within the row), or element by element, 0 past `valid`.
template <class T, bool Vectorized>
__device__ inline void load(float (&v)[kVec<T>], const T* p, index_t valid) {
  constexpr int V = kVec<T>;
  if constexpr (Vectorized) {
    const uint4 raw = *reinterpret_cast<const uint4*>(p);
    T x[V];
    memcpy(x, &raw, sizeof raw);
    for (int k = 0; k < V; ++k) v[k] = widen(x[k]);
  } else {
    for (int k = 0; k < V; ++k) v[k] = k < valid ? widen(p[k]) : 0.0f;
  }
}

template <class T, bool Vectorized>
__device__ inline void store(T* p, const float (&v)[kVec<T>], index_t valid) {
  constexpr int V = kVec<T>;
  if constexpr (Vectorized) {
    T x[V];
    for (int k = 0; k < V; ++k) x[k] = narrow<T>(v[k]);
    uint4 raw;
    memcpy(&raw, x, sizeof raw);
    *reinterpret_cast<uint4*>(p) = raw;
  } else {
    for (int k = 0; k < V; ++k)
      if (k < valid) p[k] = narrow<T>(v[k]);
  }
}

__device__ inline float warp_sum(float x) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) x += __shfl_xor_sync(0xffffffffu, x, offset);
  return x;
}

// Shared memory: the block's partial sums of dbias and dweight (C_pad floats
// each, C_pad = C rounded up to a chunk), then the staging area of one chunk
// of every warp's terms, [2][kWarps][kChunk] floats.
template <class Act>
std::size_t shared_bytes(index_t C_pad) {
  return (2 * std::size_t(C_pad) + 2 * std::size_t(kWarps) * kChunk<Act>) * sizeof(float);
}

template <class Act, class Grad, bool Vectorized, bool OverwriteDinp>
__global__ void __launch_bounds__(kThreads, kBlocksPerSM)
    llmc_layernorm_backward(Act* dinp, Grad* dweight, Grad* dbias, float* scratch,
                            unsigned int* counter, const Act* dout, const Act* inp,
                            const Act* weight, const float* mean, const float* rstd, index_t M,
                            index_t C, index_t C_pad) {
  constexpr int V = kVec<Act>;
  constexpr int chunk = kChunk<Act>;
  extern __shared__ float4 shared_raw[];  // float4: 16-byte aligned
  float* const shared = reinterpret_cast<float*>(shared_raw);
  float* const acc = shared;                 // [2][C_pad]: dbias, dweight
  float* const stage = shared + 2 * C_pad;   // [2][kWarps][chunk]
  __shared__ bool last_block;
  const int warp = int(threadIdx.x) / kWarp, lane = int(threadIdx.x) % kWarp;

  for (index_t i = threadIdx.x; i < 2 * C_pad; i += kThreads) acc[i] = 0.0f;
  __syncthreads();

  const float inv_C = 1.0f / float(C);
  const index_t rows_per_round = index_t(gridDim.x) * kWarps;
  for (index_t first = index_t(blockIdx.x) * kWarps; first < M; first += rows_per_round) {
    const index_t row = first + warp;
    const bool active = row < M;
    float row_mean = 0.0f, row_rstd = 0.0f, mean_dnorm = 0.0f, mean_dnorm_norm = 0.0f;
    if (active) {  // warp-uniform
      row_mean = mean[row];
      row_rstd = rstd[row];
      float s_dnorm = 0.0f, s_dnorm_norm = 0.0f;
      for (index_t c = index_t(lane) * V; c < C; c += chunk) {
        float d[V], x[V], w[V];
        load<Act, Vectorized>(d, dout + row * C + c, C - c);
        load<Act, Vectorized>(x, inp + row * C + c, C - c);
        load<Act, Vectorized>(w, weight + c, C - c);
        for (int k = 0; k < V; ++k) {
          const float dnorm = d[k] * w[k];
          s_dnorm += dnorm;
          s_dnorm_norm += dnorm * ((x[k] - row_mean) * row_rstd);
        }
      }
      mean_dnorm = warp_sum(s_dnorm) * inv_C;
      mean_dnorm_norm = warp_sum(s_dnorm_norm) * inv_C;
    }
    // The same chunks for every warp of the block (inactive ones stage zeros):
    // the barriers below are reached by all.
    for (index_t c0 = 0; c0 < C; c0 += chunk) {
      const index_t c = c0 + index_t(lane) * V;
      float term_dbias[V] = {}, term_dweight[V] = {};
      if (active && c < C) {
        float d[V], x[V], w[V], out[V];
        load<Act, Vectorized>(d, dout + row * C + c, C - c);
        load<Act, Vectorized>(x, inp + row * C + c, C - c);
        load<Act, Vectorized>(w, weight + c, C - c);
        if constexpr (!OverwriteDinp) load<Act, Vectorized>(out, dinp + row * C + c, C - c);
        for (int k = 0; k < V; ++k) {
          const float norm = (x[k] - row_mean) * row_rstd;
          const float value = row_rstd * (d[k] * w[k] - mean_dnorm - norm * mean_dnorm_norm);
          out[k] = OverwriteDinp ? value : out[k] + value;
          term_dbias[k] = d[k];
          term_dweight[k] = d[k] * norm;
        }
        store<Act, Vectorized>(dinp + row * C + c, out, C - c);
      }
      float* const mine = stage + warp * chunk + lane * V;  // 16-byte aligned: V is 4 or 8
      for (int q = 0; q < V; q += 4) {
        *reinterpret_cast<float4*>(mine + q) =
            make_float4(term_dbias[q], term_dbias[q + 1], term_dbias[q + 2], term_dbias[q + 3]);
        *reinterpret_cast<float4*>(mine + kWarps * chunk + q) = make_float4(
            term_dweight[q], term_dweight[q + 1], term_dweight[q + 2], term_dweight[q + 3]);
      }
      __syncthreads();
      // Thread t adds column t % chunk of dbias (t < chunk) or dweight over
      // the warps, in warp order; each (output, column) has one owner.
      for (int t = int(threadIdx.x); t < 2 * chunk; t += kThreads) {
        const int which = t / chunk, column = t % chunk;
        const float* terms = stage + which * kWarps * chunk + column;
        float s = 0.0f;
        for (int w = 0; w < kWarps; ++w) s += terms[w * chunk];
        acc[which * C_pad + c0 + column] += s;  // columns past C: zeros into padding
      }
      __syncthreads();
    }
  }

  // This block's partial sums to scratch[block][2][C], then the last block
  // adds them up.
  float* const mine = scratch + index_t(blockIdx.x) * 2 * C;
  for (index_t i = threadIdx.x; i < C; i += kThreads) {
    mine[i] = acc[i];
    mine[C + i] = acc[C_pad + i];
  }
  __threadfence();  // the partial sums visible device-wide before the count says so
  __syncthreads();
  if (threadIdx.x == 0) last_block = atomicAdd(counter, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!last_block) return;
  __threadfence();
  for (index_t i = threadIdx.x; i < C; i += kThreads) {
    float s_dbias = 0.0f, s_dweight = 0.0f;
    for (unsigned b = 0; b < gridDim.x; ++b) {
      const float* theirs = scratch + index_t(b) * 2 * C;
      s_dbias += __ldcg(theirs + i);  // L2, never a stale L1 line
      s_dweight += __ldcg(theirs + C + i);
    }
    dweight[i] = narrow<Grad>(widen(dweight[i]) + s_dweight);
    if (dbias) dbias[i] = narrow<Grad>(widen(dbias[i]) + s_dbias);
  }
  if (threadIdx.x == 0) *counter = 0;  // the stream's next kernel starts after this one ends
}

// The peer's scratch buffer and counter, made on first use, grown when a
// call needs more, released at Kokkos::finalize (llmk-perf calls peers from
// one thread).
struct State {
  float* scratch = nullptr;
  std::size_t scratch_count = 0;
  unsigned int* counter = nullptr;
  int multiprocessors = 0;
};
State state;

State& get_state() {
  if (!state.counter) {
    int device = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    check(cudaDeviceGetAttribute(&state.multiprocessors, cudaDevAttrMultiProcessorCount, device),
          "cudaDeviceGetAttribute");
    check(cudaMalloc(&state.counter, sizeof(unsigned int)), "cudaMalloc (counter)");
    check(cudaMemset(state.counter, 0, sizeof(unsigned int)), "cudaMemset (counter)");
    Kokkos::push_finalize_hook([] {
      cudaFree(state.scratch);
      cudaFree(state.counter);
      state = State{};
    });
  }
  return state;
}

float* scratch(std::size_t count) {
  State& s = get_state();
  if (count > s.scratch_count) {
    check(cudaFree(s.scratch), "cudaFree");  // synchronizes: only while the size grows (warm-up)
    s.scratch = nullptr;
    check(cudaMalloc(&s.scratch, count * sizeof(float)), "cudaMalloc (scratch)");
    s.scratch_count = count;
  }
  return s.scratch;
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

template <class Act, class Grad, bool Vectorized, bool OverwriteDinp>
void launch(const PeerArgs& a, int blocks, index_t C_pad, float* part, cudaStream_t stream) {
  auto kernel = llmc_layernorm_backward<Act, Grad, Vectorized, OverwriteDinp>;
  const std::size_t smem = shared_bytes<Act>(C_pad);
  if (smem > 48 * 1024)
    check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)),
          "cudaFuncSetAttribute (shared memory for C)");
  kernel<<<blocks, kThreads, smem, stream>>>(
      static_cast<Act*>(a.dinp), static_cast<Grad*>(a.dweight), static_cast<Grad*>(a.dbias), part,
      get_state().counter, static_cast<const Act*>(a.dout), static_cast<const Act*>(a.inp),
      static_cast<const Act*>(a.weight), a.mean, a.rstd, a.M, a.C, C_pad);
  check(cudaGetLastError(), "kernel launch");
}

template <class Act, class Grad>
void run_typed(const PeerArgs& a) {
  if (a.M == 0 || a.C == 0) return;  // nothing to add, no row to write
  const cudaStream_t stream = Kokkos::Cuda().cuda_stream();
  constexpr int V = kVec<Act>;
  const index_t C_pad = (a.C + kChunk<Act> - 1) / kChunk<Act> * kChunk<Act>;
  const index_t rounds_of_rows = (a.M + kWarps - 1) / kWarps;
  const int blocks = int(std::min<index_t>(kBlocksPerSM * index_t(get_state().multiprocessors),
                                           rounds_of_rows));
  float* const part = scratch(std::size_t(blocks) * 2 * std::size_t(a.C));
  const bool vectorized = a.C % V == 0 && aligned16(a.dinp) && aligned16(a.dout) &&
                          aligned16(a.inp) && aligned16(a.weight);
  if (vectorized) {
    if (a.overwrite_dinp) launch<Act, Grad, true, true>(a, blocks, C_pad, part, stream);
    else launch<Act, Grad, true, false>(a, blocks, C_pad, part, stream);
  } else {
    if (a.overwrite_dinp) launch<Act, Grad, false, true>(a, blocks, C_pad, part, stream);
    else launch<Act, Grad, false, false>(a, blocks, C_pad, part, stream);
  }
}

void llmc_style(const PeerArgs& a) {
  if (a.precision == "fp32") run_typed<float, float>(a);
  else if (a.precision == "bf16") run_typed<__nv_bfloat16, __nv_bfloat16>(a);
  else if (a.precision == "bf16-fp32grad") run_typed<__nv_bfloat16, float>(a);
  else throw std::invalid_argument("llmk-perf (layernorm llmc-style): no precision " + a.precision);
}

}  // namespace

std::vector<Peer> llmc_peers() {
  Peer p;
  p.name = "llmc-style";
  p.backends = {"Cuda"};
  p.precisions = {"fp32", "bf16", "bf16-fp32grad"};
  p.run = llmc_style;
  p.comparison = true;
  p.description =
      "llm.c's algorithm (layernorm_backward_kernel10's idea, written independently): one kernel, "
      "2 blocks per SM of 16 warps, a warp per row, float per-block sums of dweight and dbias, "
      "the last block (an atomic counter) adds the blocks' sums in order; deterministic";
  return {p};
}

}  // namespace llmk::perf::layernorm_backward
