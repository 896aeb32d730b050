// The layer-norm forward's "warp_rows" (ops/layernorm_forward/warp_rows.hpp
// says what and why): a warp a row, the row in the lanes' registers.
#include <ops/layernorm_forward/op.hpp>
#include <ops/layernorm_forward/warp_rows.hpp>

#include <backends/cuda/cuda_checks.hpp>
#include <kernels/pack.hpp>
#include <llmk/bf16.hpp>

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace llmk::op::layernorm_forward {
namespace {

constexpr int kWarps = 8, kThreads = 32 * kWarps;  // a block's: 8 rows

template <class T>
using Chunk = kernels::PackOf<T, 16>;

template <class T>
struct RowArgs {
  T* out;
  float* mean;
  float* rstd;
  const T* inp;
  const T* weight;
  const T* bias;  // null without a bias
  index_t M;
  int C;
  int chunks;  // 16-byte chunks a row: C / V
  float eps;
  bool accumulate;
};

// The sum of every lane's value on every lane, in a fixed order.
__device__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// NCH: a lane's chunks of a row, at most (lane l has chunks l + 32·i).
template <class T, int NCH>
__global__ void __launch_bounds__(kThreads) layernorm_forward_warp_rows(const RowArgs<T> a) {
  constexpr int V = Chunk<T>::size;
  const index_t m = index_t(blockIdx.x) * kWarps + int(threadIdx.x) / 32;
  const int lane = int(threadIdx.x) % 32;
  if (m >= a.M) return;
  const auto* const x = reinterpret_cast<const Chunk<T>*>(a.inp + m * a.C);
  Chunk<T> xs[NCH];
#pragma unroll
  for (int i = 0; i < NCH; ++i) {
    const int q = lane + 32 * i;
    if (q < a.chunks) xs[i] = x[q];
  }
  float sum = 0;
#pragma unroll
  for (int i = 0; i < NCH; ++i) {
    if (lane + 32 * i >= a.chunks) continue;
#pragma unroll
    for (int u = 0; u < V; ++u) sum += xs[i].get(u);
  }
  const float mean = warp_sum(sum) / float(a.C);
  float squares = 0;
#pragma unroll
  for (int i = 0; i < NCH; ++i) {
    if (lane + 32 * i >= a.chunks) continue;
#pragma unroll
    for (int u = 0; u < V; ++u) {
      const float d = xs[i].get(u) - mean;
      squares += d * d;
    }
  }
  const float rstd = rstd_of(warp_sum(squares), a.C, a.eps);
  auto* const out = reinterpret_cast<Chunk<T>*>(a.out + m * a.C);
  const auto* const weight = reinterpret_cast<const Chunk<T>*>(a.weight);
  const auto* const bias = reinterpret_cast<const Chunk<T>*>(a.bias);
#pragma unroll
  for (int i = 0; i < NCH; ++i) {
    const int q = lane + 32 * i;
    if (q >= a.chunks) continue;
    const Chunk<T> w = weight[q];
    Chunk<T> b{}, y{};
    if (bias) b = bias[q];
    Chunk<T> old{};
    if (a.accumulate) old = out[q];
#pragma unroll
    for (int u = 0; u < V; ++u) {
      const float v = (xs[i].get(u) - mean) * rstd * w.get(u) + (bias ? b.get(u) : 0.0f);
      y.set(u, a.accumulate ? old.get(u) + v : v);
    }
    out[q] = y;
  }
  if (lane == 0) {
    a.mean[m] = mean;
    a.rstd[m] = rstd;
  }
}

template <class T, int NCH>
void launch(const RowArgs<T>& a, cudaStream_t stream) {
  const index_t blocks = (a.M + kWarps - 1) / kWarps;
  layernorm_forward_warp_rows<T, NCH><<<unsigned(blocks), kThreads, 0, stream>>>(a);
  backends::check_cuda(cudaGetLastError(), "layernorm_forward warp_rows: kernel launch");
}

bool aligned(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

}  // namespace

template <class ExecSpace, class A>
bool warp_rows_run(const ExecSpace& exec, const A& a) {
  using T = typename decltype(a.inp)::non_const_value_type;
  static_assert(std::is_same_v<typename decltype(a.out)::value_type, T>, "out of inp's type");
  constexpr int V = Chunk<T>::size;
  const index_t M = index_t(a.inp.extent(0)), C = index_t(a.inp.extent(1));
  if (M == 0 || C == 0 || C % V != 0 || C / V > 32 * kWarpRowsMaxChunks) return false;
  if ((a.inp.stride(0) != C || a.out.stride(0) != C) && M > 1) return false;
  const bool bias = a.bias.extent(0) != 0;
  if (!aligned(a.out.data()) || !aligned(a.inp.data()) || !aligned(a.weight.data()) ||
      (bias && !aligned(a.bias.data())))
    return false;
  if (M > index_t(0x7fffffff) * kWarps) return false;  // the grid's blocks
  const RowArgs<T> r{a.out.data(),    a.mean.data(),          a.rstd.data(),
                     a.inp.data(),    a.weight.data(),        bias ? a.bias.data() : nullptr,
                     M,               int(C),                 int(C / V),
                     a.eps,           !a.overwrite_out};
  // Registers for the chunks a lane holds: the smallest of 1, 2, 4, 8.
  const int per_lane = (r.chunks + 31) / 32;
  const cudaStream_t stream = exec.cuda_stream();
  if (per_lane <= 1)
    launch<T, 1>(r, stream);
  else if (per_lane <= 2)
    launch<T, 2>(r, stream);
  else if (per_lane <= 4)
    launch<T, 4>(r, stream);
  else
    launch<T, 8>(r, stream);
  return true;
}

#define LLMK_LAYERNORM_FORWARD_WARP_ROWS(P) \
  template bool warp_rows_run(const Kokkos::Cuda&, const Args<Kokkos::Cuda, P::in, P::out>&);
LLMK_LAYERNORM_FORWARD_WARP_ROWS(Fp32)
LLMK_LAYERNORM_FORWARD_WARP_ROWS(Bf16)
#undef LLMK_LAYERNORM_FORWARD_WARP_ROWS

}  // namespace llmk::op::layernorm_forward
