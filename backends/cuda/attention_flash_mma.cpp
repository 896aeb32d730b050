// "flash_mma" for attention_backward_recompute (ops/attention_backward_recompute/
// flash_mma.hpp says what it computes): flash-attention's backward on bf16
// tensor cores, in two kernels after the rows' D (row_dots_kernel):
//   DkDv: a block of 64 keys of one (b, h) walks the query blocks at or after
//         it; per query tile, Sᵀ = k·qᵀ and dPᵀ = v·dout_hᵀ (warp w owns keys
//         16w..16w+15: the tile's rows), Pᵀ and dSᵀ from them in registers,
//         then dv += Pᵀ·dout_h and dk += dSᵀ·q with Pᵀ and dSᵀ as the A
//         operands straight from the accumulators (an m16n8 accumulator pair
//         is an m16k16 A fragment);
//   Dq:   a block of 64 queries walks the key blocks at or before it: S, dP,
//         dS the same way (warp w owns queries 16w..), dq += dS·k.
// Every sum runs over its tiles in a fixed order (no atomics): deterministic.
// Tiles live in shared memory at a row stride of 72 bf16 (144 bytes): the
// 32-bit fragment loads of 8 rows × 4 lanes and ldmatrix's 8 row addresses
// fall on distinct banks. B fragments come by ldmatrix, those that run along
// the tile's rows (dout_h and q for dv, dk; k for dq) by ldmatrix.trans. The
// streamed tiles are double buffered (cp.async). Steps measured on the H200
// (B 8, T 1024, bf16): 0.514 ms plain, 0.377 with cp.async and ex2.approx,
// 0.360 with half tiles, ldmatrix and 3 blocks an SM, 0.283 with the rows'
// D in a kernel of 8 lanes a row (was 55 us of the 0.360) and no per-element
// checks in the tiles without a masked pair (docs/performance.md).
#include <ops/attention_backward_recompute/flash_mma.hpp>

#include <backends/cuda/attention_flash_mma.hpp>
#include <backends/cuda/cuda_checks.hpp>
#include <kernels/attention_flash.hpp>
#include <llmk/bf16.hpp>

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace llmk::op::attention_backward_recompute {
namespace {

using namespace flash_mma;  // kBlock, kHead, kThreads, kLog2e, Args, row_value, ...
static_assert(kBlock == kFlashMmaBlock && kHead == kFlashMmaMaxHead, "flash_mma.hpp's tiles");
using backends::ptx::commit_group;
using backends::ptx::cp_async16;
using backends::ptx::wait_group;

constexpr int kStride = 72;  // a shared row's bf16 (144 bytes)

// A tile: rows [row0, row0 + 64) of the (b, h) head found at `base` with row
// stride `ld` (elements), channels [0, HS), zeros past T and past HS. By
// cp.async where every row is 16-byte aligned and HS = 64 (it has landed
// after wait_group), else by plain loads.
__device__ void load_tile(std::uint16_t (*tile)[kStride], const bf16* base, index_t ld, index_t row0,
                          index_t T, int HS, bool vector_loads) {
  if (vector_loads) {
    // 64 rows × 8 packs of 8 bf16, asynchronous: the caller commits and
    // waits (commit_group, wait_group) before a barrier.
    for (int i = threadIdx.x; i < kBlock * 8; i += kThreads) {
      const int r = i / 8, c = (i % 8) * 8;
      const index_t row = row0 + r;
      cp_async16(&tile[r][c], base + (row < T ? row : 0) * ld + c, row < T);
    }
  } else {
    for (int i = threadIdx.x; i < kBlock * kHead; i += kThreads) {
      const int r = i / kHead, c = i % kHead;
      const index_t row = row0 + r;
      tile[r][c] = row < T && c < HS ? base[row * ld + c].bits : std::uint16_t(0);
    }
  }
}

__device__ __forceinline__ std::uint32_t pack(float lo, float hi) {
  // lo in the low half: the lower k (or column) index of a fragment's pair.
  const std::uint32_t l = bf16(lo).bits, h = bf16(hi).bits;
  return l | (h << 16);
}

__device__ __forceinline__ std::uint32_t lds32(const std::uint16_t* p) {
  return *reinterpret_cast<const std::uint32_t*>(p);
}

// D (16×8, float) += A (16×16, bf16, row-major fragment) · B (16×8, bf16).
__device__ __forceinline__ void mma(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                    std::uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
  __trap();  // refused on the host before a launch (flash_mma_device_has_mma)
#endif
}

// B fragments of two n-tiles (columns n0..n0+15) for k rows k0..k0+15 of a
// tile stored [k][n] (rows along k): ldmatrix.trans of four 8×8 matrices.
// b[0], b[1] are n-tile n0's, b[2], b[3] n-tile n0 + 8's.
__device__ __forceinline__ void ldsm_trans(std::uint32_t (&b)[4], const std::uint16_t (*tile)[kStride],
                                           int k0, int n0) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const int lane = threadIdx.x % 32;
  const int row = k0 + (lane / 8 % 2) * 8 + lane % 8, col = n0 + lane / 16 * 8;
  const auto addr = static_cast<std::uint32_t>(__cvta_generic_to_shared(&tile[row][col]));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(b[0]), "=r"(b[1]), "=r"(b[2]), "=r"(b[3])
               : "r"(addr));
#else
  (void)b, (void)tile, (void)k0, (void)n0;
  __trap();
#endif
}

// B fragments of two n-tiles (n0..n0+15) for k-step k0..k0+15 of a tile
// stored [n][k] (rows along n, k contiguous): ldmatrix of four 8×8
// matrices, one instruction for what four 32-bit loads a tile would take.
// b[0], b[1] are n-tile n0's, b[2], b[3] n-tile n0 + 8's.
__device__ __forceinline__ void ldsm(std::uint32_t (&b)[4], const std::uint16_t (*tile)[kStride],
                                     int n0, int k0) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const int lane = threadIdx.x % 32, mi = lane / 8;
  const int row = n0 + (mi / 2) * 8 + lane % 8, col = k0 + (mi % 2) * 8;
  const auto addr = static_cast<std::uint32_t>(__cvta_generic_to_shared(&tile[row][col]));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(b[0]), "=r"(b[1]), "=r"(b[2]), "=r"(b[3])
               : "r"(addr));
#else
  (void)b, (void)tile, (void)n0, (void)k0;
  __trap();
#endif
}

// A fragments (16 rows × 64 channels, 4 k-steps) of rows r0..r0+15 of a tile.
__device__ __forceinline__ void load_a(std::uint32_t (&a)[4][4], const std::uint16_t (*tile)[kStride],
                                       int r0) {
  const int lane = threadIdx.x % 32, g = lane / 4, c = lane % 4;
  for (int ks = 0; ks < 4; ++ks) {
    a[ks][0] = lds32(&tile[r0 + g][ks * 16 + 2 * c]);
    a[ks][1] = lds32(&tile[r0 + g + 8][ks * 16 + 2 * c]);
    a[ks][2] = lds32(&tile[r0 + g][ks * 16 + 2 * c + 8]);
    a[ks][3] = lds32(&tile[r0 + g + 8][ks * 16 + 2 * c + 8]);
  }
}

// A tile's products run on half tiles of 32 positions (kHalf), which keeps
// a warp's score accumulators at 2 × 16 registers (dkdv: 254 registers a
// thread with whole tiles, 232 with halves, 168 under its launch bounds).
constexpr int kHalf = 32;

// acc[nt] (16 × 32: 4 n-tiles) = a (16 × 64) · tile[n0..n0+31]ᵀ, rows n0..
// of the tile as the columns: acc[r][n] = Σ_d a[r][d]·tile[n0 + n][d].
__device__ __forceinline__ void product_with_rows(float (&acc)[4][4],
                                                  const std::uint32_t (&a)[4][4],
                                                  const std::uint16_t (*tile)[kStride], int n0) {
  for (int nt = 0; nt < 4; ++nt)
    for (int j = 0; j < 4; ++j) acc[nt][j] = 0.f;
  for (int ks = 0; ks < 4; ++ks)
    for (int nt = 0; nt < 4; nt += 2) {
      std::uint32_t b[4];
      ldsm(b, tile, n0 + nt * 8, ks * 16);
      mma(acc[nt], a[ks], b[0], b[1]);
      mma(acc[nt + 1], a[ks], b[2], b[3]);
    }
}

// acc (16 × 64 channels) += x (16 × 32 positions, accumulator layout, as
// bf16) · tile rows k0..k0+31 (positions × 64 channels).
__device__ __forceinline__ void accumulate_times_tile(float (&acc)[8][4], const float (&x)[4][4],
                                                      const std::uint16_t (*tile)[kStride],
                                                      int k0) {
  for (int kk = 0; kk < 2; ++kk) {
    // Accumulator tiles 2kk and 2kk + 1 are the A fragment of k-step kk.
    const std::uint32_t a[4] = {pack(x[2 * kk][0], x[2 * kk][1]), pack(x[2 * kk][2], x[2 * kk][3]),
                                pack(x[2 * kk + 1][0], x[2 * kk + 1][1]),
                                pack(x[2 * kk + 1][2], x[2 * kk + 1][3])};
    for (int nd = 0; nd < 8; nd += 2) {
      std::uint32_t b[4];
      ldsm_trans(b, tile, k0 + kk * 16, nd * 8);
      mma(acc[nd], a, b[0], b[1]);
      mma(acc[nd + 1], a, b[2], b[3]);
    }
  }
}

// Both kernels stream tiles through two shared buffers: while the products
// of tile i run on buffer i % 2, tile i + 1's rows are in flight into the
// other (cp.async), its per-row floats in registers.
using Tile = std::uint16_t[kBlock][kStride];

// 3 blocks an SM (≤ 168 registers, a few spilled): B 8, T 1024 0.360 ms
// against 0.376 at its natural 232 registers and 2 blocks (H200, call E3).
__global__ void __launch_bounds__(kThreads, 3) dkdv_kernel(const Args<bf16> a) {
  __shared__ __align__(16) Tile sq[2], sdo[2];
  __shared__ float slse[2][kBlock], sD[2][kBlock];
  const index_t bh = blockIdx.x, b = bh / a.NH, h = bh % a.NH;
  const index_t kb = blockIdx.y;  // the heaviest (first) key blocks start first
  const index_t u0 = kb * kBlock;
  const int warp = threadIdx.x / 32, tid = threadIdx.x;
  const index_t ld = 3 * a.C;
  const bf16* const q = a.qkv + b * a.T * ld + h * a.HS;
  const bf16* const dout = a.dout + b * a.T * a.C + h * a.HS;
  const float* const lse = a.lse + bh * a.T;
  const float* const D = a.D + bh * a.T;

  // This warp's keys and values as A fragments, staged through buffer 1.
  std::uint32_t kf[4][4], vf[4][4];
  load_tile(sq[1], q + a.C, ld, u0, a.T, a.HS, a.vector_loads);
  load_tile(sdo[1], q + 2 * a.C, ld, u0, a.T, a.HS, a.vector_loads);
  commit_group();
  // The first query tile (the diagonal one) into buffer 0.
  load_tile(sq[0], q, ld, u0, a.T, a.HS, a.vector_loads);
  load_tile(sdo[0], dout, a.C, u0, a.T, a.HS, a.vector_loads);
  commit_group();
  if (tid < kBlock) {
    slse[0][tid] = row_value(lse, u0, tid, a.T, kLog2e);
    sD[0][tid] = row_value(D, u0, tid, a.T, 1.0f);
  }
  wait_group<1>();
  __syncthreads();
  load_a(kf, sq[1], warp * 16);
  load_a(vf, sdo[1], warp * 16);
  __syncthreads();  // buffer 1 is free

  float dk[8][4] = {}, dv[8][4] = {};
  const float scale2 = a.alpha * kLog2e;
  const index_t blocks = (a.T + kBlock - 1) / kBlock;
  const index_t u_base = u0 + warp * 16;
  int buf = 0;
  for (index_t qb = kb; qb < blocks; ++qb, buf ^= 1) {
    const index_t t0 = qb * kBlock;
    const bool next = qb + 1 < blocks;
    float next_lse = 0.f, next_d = 0.f;
    if (next) {
      load_tile(sq[buf ^ 1], q, ld, t0 + kBlock, a.T, a.HS, a.vector_loads);
      load_tile(sdo[buf ^ 1], dout, a.C, t0 + kBlock, a.T, a.HS, a.vector_loads);
      if (tid < kBlock) {
        next_lse = row_value(lse, t0 + kBlock, tid, a.T, kLog2e);
        next_d = row_value(D, t0 + kBlock, tid, a.T, 1.0f);
      }
    }
    commit_group();
    wait_group<1>();  // this tile's group has landed
    __syncthreads();
    for (int half = 0; half < kBlock; half += kHalf) {
      // Queries t0 + half .. + 31 all before this warp's keys: all masked.
      if (t0 + half + kHalf - 1 < u_base) continue;
      float s[4][4], dp[4][4];
      product_with_rows(s, kf, sq[buf], half);    // Sᵀ: rows keys, columns queries
      product_with_rows(dp, vf, sdo[buf], half);  // dPᵀ
      // Every pair causal and below T (all but the diagonal's and the last
      // tile's): no per-element checks.
      const bool whole = t0 + half + kHalf <= a.T && u_base + 15 <= t0 + half;
      if (whole) {
        probabilities(s, dp, slse[buf], sD[buf], scale2, half, [](int, int col, int& qi) {
          qi = col;
          return true;
        });
      } else {
        probabilities(s, dp, slse[buf], sD[buf], scale2, half, [&](int row, int col, int& qi) {
          qi = col;
          const index_t u = u_base + row, t = t0 + col;
          return t < a.T && u <= t;
        });
      }
      accumulate_times_tile(dv, s, sdo[buf], half);  // dv += Pᵀ·dout_h
      accumulate_times_tile(dk, dp, sq[buf], half);  // dk += dSᵀ·q
    }
    __syncthreads();  // buffer buf is free for tile qb + 2
    if (next && tid < kBlock) slse[buf ^ 1][tid] = next_lse, sD[buf ^ 1][tid] = next_d;
  }
  store(a, dk, b, h, 1, u_base, a.alpha);
  store(a, dv, b, h, 2, u_base, 1.0f);
}

__global__ void __launch_bounds__(kThreads) dq_kernel(const Args<bf16> a) {
  __shared__ __align__(16) Tile sk[2], sv[2];
  __shared__ float slse[kBlock], sD[kBlock];
  const index_t bh = blockIdx.x, b = bh / a.NH, h = bh % a.NH;
  const index_t blocks = (a.T + kBlock - 1) / kBlock;
  const index_t qb = blocks - 1 - index_t(blockIdx.y);  // the heaviest first
  const index_t t0 = qb * kBlock;
  const int warp = threadIdx.x / 32, tid = threadIdx.x;
  const index_t ld = 3 * a.C;
  const bf16* const q = a.qkv + b * a.T * ld + h * a.HS;
  const bf16* const dout = a.dout + b * a.T * a.C + h * a.HS;

  // This warp's queries and dout_h rows as A fragments, staged through
  // buffer 1; the first key tile into buffer 0.
  std::uint32_t qf[4][4], dof[4][4];
  load_tile(sk[1], q, ld, t0, a.T, a.HS, a.vector_loads);
  load_tile(sv[1], dout, a.C, t0, a.T, a.HS, a.vector_loads);
  commit_group();
  load_tile(sk[0], q + a.C, ld, 0, a.T, a.HS, a.vector_loads);
  load_tile(sv[0], q + 2 * a.C, ld, 0, a.T, a.HS, a.vector_loads);
  commit_group();
  if (tid < kBlock) {
    slse[tid] = row_value(a.lse + bh * a.T, t0, tid, a.T, kLog2e);
    sD[tid] = row_value(a.D + bh * a.T, t0, tid, a.T, 1.0f);
  }
  wait_group<1>();
  __syncthreads();
  load_a(qf, sk[1], warp * 16);
  load_a(dof, sv[1], warp * 16);
  __syncthreads();  // buffer 1 is free

  float dq[8][4] = {};
  const float scale2 = a.alpha * kLog2e;
  const index_t t_base = t0 + warp * 16;
  int buf = 0;
  for (index_t kb = 0; kb <= qb; ++kb, buf ^= 1) {
    const index_t u0 = kb * kBlock;
    if (kb < qb) {
      load_tile(sk[buf ^ 1], q + a.C, ld, u0 + kBlock, a.T, a.HS, a.vector_loads);
      load_tile(sv[buf ^ 1], q + 2 * a.C, ld, u0 + kBlock, a.T, a.HS, a.vector_loads);
    }
    commit_group();
    wait_group<1>();
    __syncthreads();
    for (int half = 0; half < kBlock; half += kHalf) {
      // Keys u0 + half .. all after this warp's queries: all masked.
      if (u0 + half > t_base + 15) continue;
      float s[4][4], dp[4][4];
      product_with_rows(s, qf, sk[buf], half);    // S: rows queries, columns keys
      product_with_rows(dp, dof, sv[buf], half);  // dP
      const bool whole = t_base + 16 <= a.T && u0 + half + kHalf - 1 <= t_base;  // as dkdv's
      if (whole) {
        probabilities(s, dp, slse, sD, scale2, half, [&](int row, int, int& qi) {
          qi = warp * 16 + row;
          return true;
        });
      } else {
        probabilities(s, dp, slse, sD, scale2, half, [&](int row, int col, int& qi) {
          qi = warp * 16 + row;
          const index_t t = t_base + row, u = u0 + col;
          return t < a.T && u <= t;
        });
      }
      accumulate_times_tile(dq, dp, sk[buf], half);  // dq += dS·k
    }
    __syncthreads();  // buffer buf is free for tile kb + 2
  }
  store(a, dq, b, h, 0, t_base, a.alpha);
}

// Σ of the 8 products x[i]·y[i] (both 16-byte aligned), in order: one
// 16-byte load of each operand in bf16, two in float.
__device__ __forceinline__ float dot8(const bf16* x, const bf16* y) {
  const uint4 xv = *reinterpret_cast<const uint4*>(x), yv = *reinterpret_cast<const uint4*>(y);
  const std::uint32_t xw[4] = {xv.x, xv.y, xv.z, xv.w}, yw[4] = {yv.x, yv.y, yv.z, yv.w};
  float s = 0.f;
  for (int w = 0; w < 4; ++w) {  // bf16 → float: the bits in the high half
    s += __uint_as_float(xw[w] << 16) * __uint_as_float(yw[w] << 16);
    s += __uint_as_float(xw[w] & 0xffff0000u) * __uint_as_float(yw[w] & 0xffff0000u);
  }
  return s;
}
__device__ __forceinline__ float dot8(const float* x, const float* y) {
  float s = 0.f;
  for (int half = 0; half < 2; ++half) {
    const float4 xv = reinterpret_cast<const float4*>(x)[half];
    const float4 yv = reinterpret_cast<const float4*>(y)[half];
    s += xv.x * yv.x;
    s += xv.y * yv.y;
    s += xv.z * yv.z;
    s += xv.w * yv.w;
  }
  return s;
}

// D[(b·NH + h)·T + t] = dout_h[t] · out_h[t] for heads of 64 channels with
// 16-byte rows: 8 lanes a row, 8 elements a lane (one 16-byte load of each
// operand in bf16, two in float), the lanes' sums added by shuffles in a
// fixed tree (deterministic). A warp reads 4 whole rows, contiguous bytes of
// each operand; the portable kernel's thread per row
// (kernels::attention_flash_row_dots) reads 2 bytes a lane from 32 rows C
// apart per load: 55 us of the 0.360 ms at B 8, T 1024, bf16 on the H200
// (ncu, call S3), where the bytes need ~7 us.
template <class E>
__global__ void row_dots_kernel(float* const D, const E* const dout, const E* const out,
                                const index_t rows, const index_t T, const index_t NH) {
  // A grid-stride loop over 8 lanes a row, the lanes' count rounded up to
  // whole warps so that every lane of a warp takes every step (shuffles).
  const index_t lanes = (rows * 8 + 31) / 32 * 32;
  const index_t stride = index_t(gridDim.x) * blockDim.x;
  for (index_t i = index_t(blockIdx.x) * blockDim.x + threadIdx.x; i < lanes; i += stride) {
    const index_t row = i / 8;  // (b·T + t)·NH + h: rows in memory order
    const int lane8 = int(i % 8);
    float s = 0.f;
    if (row < rows) {
      const index_t at = row * kHead + lane8 * 8;
      s = dot8(dout + at, out + at);
    }
    for (int o = 4; o > 0; o /= 2) s += __shfl_xor_sync(0xffffffffu, s, o);
    if (row < rows && lane8 == 0) {
      const index_t h = row % NH, bt = row / NH, t = bt % T, b = bt / T;
      D[(b * NH + h) * T + t] = s;
    }
  }
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

}  // namespace

namespace flash_mma {
void launch_dkdv_dq(const Args<bf16>& a, const dim3 grid, cudaStream_t stream) {
  dkdv_kernel<<<grid, kThreads, 0, stream>>>(a);
  backends::check_cuda(cudaGetLastError(), "flash_mma dk/dv kernel launch");
  dq_kernel<<<grid, kThreads, 0, stream>>>(a);
  backends::check_cuda(cudaGetLastError(), "flash_mma dq kernel launch");
}
}  // namespace flash_mma

bool flash_mma_device_has_mma() {
  int major = 0;
  const int device = Kokkos::Cuda().cuda_device();
  backends::check_cuda(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
                       "cudaDeviceGetAttribute");
  return major >= 8;
}

template <class ExecSpace, class P>
void flash_mma_run(const ExecSpace& exec, const Problem<ExecSpace, P>& p, float* const D) {
  using E = typename P::in;
  static_assert(std::is_same_v<E, typename P::dqkv>, "flash_mma: dqkv of the inputs' type");
  const auto& f = p.args;
  const index_t blocks = (f.T + kBlock - 1) / kBlock;  // within FlashMma::grid_fits
  Args<E> a;
  a.dqkv = f.dqkv, a.dout = f.dout, a.qkv = f.qkv, a.lse = f.lse, a.D = D;
  a.T = f.T, a.C = f.C, a.NH = f.NH, a.HS = int(f.HS());
  a.alpha = f.alpha, a.overwrite = f.overwrite;
  // 16-byte rows: every head's first element and every row stride.
  constexpr index_t kPerPack = index_t(16 / sizeof(E));
  a.vector_loads = a.HS == kHead && aligned16(f.qkv) && aligned16(f.dout) && f.C % kPerPack == 0;
  const dim3 grid(unsigned(f.B * f.NH), unsigned(blocks));
  cudaStream_t stream = exec.cuda_stream();
  backends::DeviceScope device(exec.cuda_device());
  if (a.vector_loads && aligned16(f.out)) {
    const index_t rows = f.B * f.T * f.NH, threads = 256;
    const index_t needed = (rows * 8 + threads - 1) / threads;
    const index_t grid_x = needed < (index_t(1) << 20) ? needed : (index_t(1) << 20);
    row_dots_kernel<E><<<unsigned(grid_x), unsigned(threads), 0, stream>>>(D, f.dout, f.out, rows,
                                                                            f.T, f.NH);
    backends::check_cuda(cudaGetLastError(), "flash_mma row dots kernel launch");
  } else {
    kernels::attention_flash_row_dots(exec, f, D);
  }
  launch_dkdv_dq(a, grid, stream);
}

template void flash_mma_run<Kokkos::Cuda, Bf16>(const Kokkos::Cuda&,
                                                const Problem<Kokkos::Cuda, Bf16>&, float*);
template void flash_mma_run<Kokkos::Cuda, Fp32>(const Kokkos::Cuda&,
                                                const Problem<Kokkos::Cuda, Fp32>&, float*);

}  // namespace llmk::op::attention_backward_recompute
