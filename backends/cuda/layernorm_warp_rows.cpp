// The layer-norm backward's "warp_rows" (ops/layernorm_backward/warp_rows.hpp
// says what and why): a warp a row, each lane's chunks of the next rows
// copied into the warp's stages in shared memory while it computes the
// current one.
#include <ops/layernorm_backward/problem.hpp>
#include <ops/layernorm_backward/warp_rows.hpp>

#include <backends/cuda/cuda_checks.hpp>
#include <backends/cuda/ptx.hpp>
#include <kernels/pack.hpp>
#include <kernels/update.hpp>
#include <llmk/bf16.hpp>

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace llmk::op::layernorm_backward {
namespace {

using backends::ptx::commit_group;
using backends::ptx::cp_async16;
using backends::ptx::cp_async4;
using backends::ptx::wait_group;
using backends::ptx::wait_until_pending;

constexpr int kWarps = int(kWarpRowsWarps), kThreads = 32 * kWarps;
// Rows a warp has in shared memory at once: the one it computes and up to
// three arriving (as many as the device's shared memory a block allows:
// 227 KiB on Hopper, so bf16 rows of C = 768 take 4 stages, fp32 ones 3).
constexpr int kMaxStages = 4;

// T: the inputs' and dinp's type; TG: dweight's and dbias'.
template <class T, class TG>
struct RowArgs {
  const T* dout;
  const T* inp;
  T* dinp;
  const T* weight;
  const float* mean;
  const float* rstd;
  TG* dweight;
  TG* dbias;        // null without a bias
  float* partials;  // a block's partial row: C of dweight, then C of dbias (with a bias)
  index_t M;
  int C;
  int chunks;  // 16-byte chunks a row: C / V
  int stages;  // rows a warp holds in shared memory
  bool accumulate, overwrite_dweight, overwrite_dbias;
};

template <class T>
using Chunk = kernels::PackOf<T, 16>;

// A block's shared memory: every warp's stages (each the row's dout, inp
// and, accumulated, dinp's old values), the weight, then each stage's mean
// and rstd.
std::size_t shared_bytes(const int chunks, const int stages, const bool accumulate) {
  const std::size_t stage = std::size_t(accumulate ? 3 : 2) * chunks * 16;
  return kWarps * stages * stage + std::size_t(chunks) * 16 + kWarps * stages * 2 * sizeof(float);
}

// After a grid-wide barrier, every block's partial row written: dweight and
// dbias (n = C or 2C columns of the partial rows) from the blocks' rows,
// kColumnThreads threads a column (consecutive lanes), thread j adding the
// rows of blocks j, j + kColumnThreads, ... in block order, then a fixed
// butterfly over the column's threads; one rounding into each output.
// (In a second launch, "blocked"'s LayernormPartialsReduce, the call took
// 0.027 ms at C = 768 bf16 and 0.038 in fp32 on the H200, device time;
// here 0.026 and 0.035: calls L1 and L5 of 2026-12-04. ncu had put the
// first kernel at 20 µs of the 27; the grid barrier costs most of the
// difference back.)
constexpr int kColumnThreads = 16;

template <class T, class TG>
__device__ void add_partial_rows(const RowArgs<T, TG>& a, const int n) {
  constexpr int kLoads = 8;  // a thread's loads in flight
  const int blocks = int(gridDim.x), j = int(threadIdx.x) % kColumnThreads;
  const index_t groups = index_t(gridDim.x) * (kThreads / kColumnThreads);
  const index_t group = (index_t(blockIdx.x) * kThreads + threadIdx.x) / kColumnThreads;
  const index_t first_of_warp = group - (int(threadIdx.x) % 32) / kColumnThreads;
  // The loop is the warp's (its shuffles need every lane), the column each
  // group's.
  for (index_t c0 = first_of_warp; c0 < n; c0 += groups) {
    const index_t c = c0 + (group - first_of_warp);
    float sum = 0;
    if (c < n) {
      for (int b0 = j; b0 < blocks; b0 += kLoads * kColumnThreads) {
        float v[kLoads];
#pragma unroll
        for (int u = 0; u < kLoads; ++u) {
          const int b = b0 + u * kColumnThreads;
          v[u] = b < blocks ? __ldcg(a.partials + index_t(b) * n + c) : 0.0f;  // L2: other SMs'
        }
#pragma unroll
        for (int u = 0; u < kLoads; ++u) sum += v[u];
      }
    }
#pragma unroll
    for (int offset = kColumnThreads / 2; offset > 0; offset /= 2)
      sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    if (c >= n || j != 0) continue;
    if (c < a.C)
      kernels::update(a.dweight[c], sum, a.overwrite_dweight);
    else
      kernels::update(a.dbias[c - a.C], sum, a.overwrite_dbias);
  }
}

// NCH: a lane's chunks of a row, at most (lane l has chunks l + 32·i).
// Launched cooperatively: one block an SM, all resident at once, for the
// grid-wide barrier before the partial rows are added.
template <class T, class TG, int NCH>
__global__ void __launch_bounds__(kThreads, 1) layernorm_warp_rows(const RowArgs<T, TG> a) {
  constexpr int V = Chunk<T>::size;
  extern __shared__ __align__(16) unsigned char raw[];
  const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
  const int Q = a.chunks, stage_chunks = (a.accumulate ? 3 : 2) * Q;
  Chunk<T>* const all_stages = reinterpret_cast<Chunk<T>*>(raw);
  Chunk<T>* const stages = all_stages + warp * a.stages * stage_chunks;
  Chunk<T>* const weight = all_stages + kWarps * a.stages * stage_chunks;
  float* const stats = reinterpret_cast<float*>(weight + Q) + warp * a.stages * 2;

  // This warp's rows: first, first + warps, ...
  const index_t warps = index_t(gridDim.x) * kWarps;
  const index_t first = index_t(blockIdx.x) * kWarps + warp;
  const index_t rows = first < a.M ? (a.M - 1 - first) / warps + 1 : 0;

  // Row k's copies as one group (an empty group past the last row, so that
  // every iteration waits for the same count).
  const auto issue = [&](const index_t k) {
    if (k < rows) {
      const int slot = int(k % a.stages);
      const index_t m = first + k * warps, offset = m * a.C;
      Chunk<T>* const s = stages + slot * stage_chunks;
#pragma unroll
      for (int i = 0; i < NCH; ++i) {
        const int q = lane + 32 * i;
        if (q >= Q) continue;
        cp_async16(s + q, a.dout + offset + q * V, true);
        cp_async16(s + Q + q, a.inp + offset + q * V, true);
        if (a.accumulate) cp_async16(s + 2 * Q + q, a.dinp + offset + q * V, true);
      }
      if (lane == 0) {
        cp_async4(stats + 2 * slot, a.mean + m);
        cp_async4(stats + 2 * slot + 1, a.rstd + m);
      }
    }
    commit_group();
  };

  for (int k = 0; k < a.stages - 1; ++k) issue(k);
  for (int q = int(threadIdx.x); q < Q; q += kThreads)
    weight[q] = *reinterpret_cast<const Chunk<T>*>(a.weight + q * V);
  __syncthreads();

  float dw[NCH][V] = {}, db[NCH][V] = {};  // the lane's columns, over all its rows
  const float inv_c = 1.0f / float(a.C);
  for (index_t k = 0; k < rows; ++k) {
    issue(k + a.stages - 1);  // into the stage of row k − 1, read by every lane
    wait_until_pending(a.stages - 1);
    __syncwarp();  // lane 0's statistics copies seen by the warp
    const int slot = int(k % a.stages);
    const Chunk<T>* const s = stages + slot * stage_chunks;
    const float mean = stats[2 * slot], rstd = stats[2 * slot + 1];
    float sum_dnorm = 0, sum_dnorm_norm = 0;
#pragma unroll
    for (int i = 0; i < NCH; ++i) {
      const int q = lane + 32 * i;
      if (q >= Q) continue;
      const Chunk<T> d = s[q], x = s[Q + q], w = weight[q];
#pragma unroll
      for (int u = 0; u < V; ++u) {
        const float dnorm = d.get(u) * w.get(u);
        sum_dnorm += dnorm;
        sum_dnorm_norm += dnorm * ((x.get(u) - mean) * rstd);
      }
    }
    // The row's sums on every lane: a butterfly, whose pairs add the same
    // two values either way round (every lane gets the same bits).
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
      sum_dnorm += __shfl_xor_sync(0xffffffffu, sum_dnorm, offset);
      sum_dnorm_norm += __shfl_xor_sync(0xffffffffu, sum_dnorm_norm, offset);
    }
    const float mean_dnorm = sum_dnorm * inv_c, mean_dnorm_norm = sum_dnorm_norm * inv_c;
    T* const dinp = a.dinp + (first + k * warps) * a.C;
#pragma unroll
    for (int i = 0; i < NCH; ++i) {
      const int q = lane + 32 * i;
      if (q >= Q) continue;
      const Chunk<T> d = s[q], x = s[Q + q], w = weight[q];
      Chunk<T> old{}, out{};
      if (a.accumulate) old = s[2 * Q + q];
#pragma unroll
      for (int u = 0; u < V; ++u) {
        const float g = d.get(u), norm = (x.get(u) - mean) * rstd;
        const float v = rstd * (g * w.get(u) - mean_dnorm - norm * mean_dnorm_norm);
        out.set(u, a.accumulate ? old.get(u) + v : v);
        dw[i][u] += g * norm;
        db[i][u] += g;
      }
      *reinterpret_cast<Chunk<T>*>(dinp + q * V) = out;
    }
    __syncwarp();  // the stage read by every lane before the next issue refills it
  }

  // The warp's column sums into its own stages (no copy in flight now),
  // then the block's: its warps' added in warp order.
  wait_group<0>();
  float* const own = reinterpret_cast<float*>(stages);
#pragma unroll
  for (int i = 0; i < NCH; ++i) {
    const int q = lane + 32 * i;
    if (q >= Q) continue;
#pragma unroll
    for (int u = 0; u < V; ++u) {
      own[q * V + u] = dw[i][u];
      if (a.dbias) own[a.C + q * V + u] = db[i][u];
    }
  }
  __syncthreads();
  const int warp_floats = a.stages * stage_chunks * int(sizeof(Chunk<T>) / sizeof(float));
  const int n = a.C * (a.dbias ? 2 : 1);
  float* const partial = a.partials + index_t(blockIdx.x) * n;
  const float* const sums = reinterpret_cast<const float*>(all_stages);
  for (int c = int(threadIdx.x); c < n; c += kThreads) {
    float total = 0;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) total += sums[w * warp_floats + c];
    partial[c] = total;
  }
  cooperative_groups::this_grid().sync();
  add_partial_rows(a, n);
}

// The kernel whose NCH is the row's chunks a lane (one instantiation each),
// launched cooperatively with `blocks` blocks (at most one an SM), or false
// where the device cannot hold them all at once (nothing launched).
template <class T, class TG, int NCH = 1>
bool launch(RowArgs<T, TG> a, const unsigned blocks, const int sms, cudaStream_t stream) {
  if constexpr (NCH < kWarpRowsMaxChunks) {
    if ((a.chunks + 31) / 32 > NCH) return launch<T, TG, NCH + 1>(a, blocks, sms, stream);
  }
  const auto kernel = layernorm_warp_rows<T, TG, NCH>;
  const std::size_t bytes = shared_bytes(a.chunks, a.stages, a.accumulate);
  backends::check_cuda(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)),
      "layernorm_backward warp_rows: cudaFuncSetAttribute (its shared memory)");
  int resident = 0;
  backends::check_cuda(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, kThreads, bytes),
      "layernorm_backward warp_rows: cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  if (index_t(resident) * sms < index_t(blocks)) return false;
  void* args[] = {&a};
  backends::check_cuda(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel),
                                                   dim3(blocks), dim3(kThreads), args, bytes, stream),
                       "layernorm_backward warp_rows: cudaLaunchCooperativeKernel");
  return true;
}

bool aligned(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

}  // namespace

template <class ExecSpace, class Args>
bool warp_rows_run(const ExecSpace& exec, const Args& a, float* partials) {
  using T = std::remove_const_t<typename decltype(Args::inp)::value_type>;
  using TG = typename decltype(Args::dweight)::value_type;
  static_assert(std::is_same_v<typename decltype(Args::dinp)::value_type, T>,
                "dinp's chunks are the inputs' chunks");
  static_assert(std::is_same_v<typename decltype(Args::dbias)::value_type, TG>,
                "dweight and dbias of one type");
  constexpr int V = Chunk<T>::size;
  const index_t M = index_t(a.dout.extent(0)), C = index_t(a.dout.extent(1));
  if (M == 0 || C == 0 || C % V != 0 || (C / V + 31) / 32 > kWarpRowsMaxChunks) return false;
  // Rows of C contiguous elements, each 16-byte aligned.
  for (const index_t stride : {index_t(a.dout.stride(0)), index_t(a.inp.stride(0)),
                               index_t(a.dinp.stride(0))})
    if (stride != C && M > 1) return false;
  if (!aligned(a.dout.data()) || !aligned(a.inp.data()) || !aligned(a.dinp.data()) ||
      !aligned(a.weight.data()))
    return false;
  RowArgs<T, TG> r{a.dout.data(),
                   a.inp.data(),
                   a.dinp.data(),
                   a.weight.data(),
                   a.mean.data(),
                   a.rstd.data(),
                   a.dweight.data(),
                   a.dbias.extent(0) != 0 ? a.dbias.data() : nullptr,
                   partials,
                   M,
                   int(C),
                   int(C / V),
                   kMaxStages,
                   !a.overwrite_dinp,
                   a.overwrite_dweight,
                   a.overwrite_dbias};
  const cudaDeviceProp& device = exec.cuda_device_prop();
  if (!device.cooperativeLaunch) return false;
  while (r.stages >= 2 && shared_bytes(r.chunks, r.stages, r.accumulate) > device.sharedMemPerBlockOptin)
    --r.stages;
  if (r.stages < 2) return false;
  const int sms = device.multiProcessorCount;
  const index_t blocks =
      std::min({index_t(sms), kWarpRowsMaxBlocks, (M + kWarpRowsWarps - 1) / kWarpRowsWarps});
  return launch(r, unsigned(blocks), sms, exec.cuda_stream());
}

#define LLMK_LAYERNORM_WARP_ROWS(P)                                     \
  template bool warp_rows_run(const Kokkos::Cuda&, const Problem<Kokkos::Cuda, P>::Args&, \
                              float*);
LLMK_LAYERNORM_WARP_ROWS(Fp32)
LLMK_LAYERNORM_WARP_ROWS(Bf16)
LLMK_LAYERNORM_WARP_ROWS(Bf16Fp32Grad)
#undef LLMK_LAYERNORM_WARP_ROWS

}  // namespace llmk::op::layernorm_backward
