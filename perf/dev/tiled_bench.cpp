// Development benchmark of kernels/gemm_tiled.hpp on a CUDA GPU: matmul's two
// GEMMs (dinp = dout·W, dweight = doutᵀ·inp with the fused dbias) through
// TiledGemm in several tunings, against cublasSgemm on the same data in the
// same run, each result compared with cuBLAS's; then attention's batched
// products (run_attention, below) against cublasSgemmStridedBatched and
// cublasGemmStridedBatchedEx. Not part of the build: perf/dev/tiled_bench.sh
// compiles it (docs/performance.md has what it measured on an H200).
// Arguments: none (everything), "quick" (matmul's rows in the shipped tuning
// only, then attention's), or "attention" (attention's rows only).
#include <kernels/gemm_tiled.hpp>

#include "dev_timing.hpp"
#include "matmul_gemms.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Space = Kokkos::Cuda;
using llmk::index_t;
using Base = llmk::kernels::TiledTuning<Space>;

// Variants of the shipped tuning.
template <int Stages, bool SplitK, int BK = Base::bk>
struct Tune : Base {
  static constexpr int stages = Stages;
  static constexpr bool split_k = SplitK;
  static constexpr int bk = BK;
};

// One team per SM: no register cap below 255.
struct OneTeamPerSM : Base {
  using launch_bounds = Kokkos::LaunchBounds<256, 1>;
  static index_t resident_teams() { return Base::resident_teams() / 2; }
};

// 4 warps of 32 × 4 micro-tiles (128 sums a thread), 2 teams per SM: cuBLAS's
// SIMT kernels' shape (128 threads, 8 warps an SM, more sums per load).
template <int BK, int MinTeams = 2>
struct FourWarps : Base {
  static constexpr int team_size = 4, tm = 32, bk = BK;
  using launch_bounds = Kokkos::LaunchBounds<128, MinTeams>;
  static index_t resident_teams() { return Base::resident_teams() / 2 * MinTeams; }
};

// 8 × 8 micro-tiles (two groups of 4 columns 128 apart) of a 64 × 256 tile.
template <int BK>
struct EightByEight : Base {
  static constexpr int tm = 8, tn = 8, bm = 64, bn = 256, bk = BK;
};

template <int Dinp, int Dweight, class T = Base>
struct Unrolled : T {
  template <bool TransA, bool TransB>
  static constexpr int k_unroll = TransA ? Dweight : Dinp;
};

// AsyncCopy for dinp's A and B (DinpA, DinpB) and dweight's (both: Dweight).
template <bool DinpA, bool DinpB, bool Dweight, class T = Base>
struct Async : T {
  template <bool TransA, bool TransB>
  static constexpr bool async_a = TransA ? Dweight : DinpA;
  template <bool TransA, bool TransB>
  static constexpr bool async_b = TransA ? Dweight : DinpB;
};

using llmk_dev::check;
void check(cublasStatus_t e, const char* what) {
  if (e != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "%s: cublas status %d\n", what, int(e));
    std::exit(1);
  }
}

// Median ms over `reps` of f(), L2 flushed before each (dev_timing.hpp).
template <class F>
float time_median(cudaStream_t s, char* flush, size_t flush_bytes, int reps, F&& f) {
  return llmk_dev::time_median_us(s, flush, flush_bytes, false, reps, f) / 1000;
}

template <class T>
using Mat = llmk_dev::Mat<T, Space>;
using Data = llmk_dev::MatmulData<Space>;
using llmk_dev::fill;
using llmk_dev::rel_diff;

struct Peer {
  float dinp_ms, dweight_ms;
};

// cuBLAS (row-major as transposed column-major): dinp = dout·W, dweight = doutᵀ·inp.
Peer run_cublas(Data& d, cublasHandle_t h, cudaStream_t s, char* flush, size_t fb, int reps) {
  const float one = 1, zero = 0;
  auto dinp = [&] {
    check(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, d.C, d.M, d.OC, &one, d.weight.data(), d.C,
                      d.dout.data(), d.OC, &zero, d.dinp_ref.data(), d.C),
          "sgemm dinp");
  };
  auto dweight = [&] {
    check(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, d.C, d.OC, d.M, &one, d.inp.data(), d.C,
                      d.dout.data(), d.OC, &zero, d.dweight_ref.data(), d.C),
          "sgemm dweight");
  };
  return {time_median(s, flush, fb, reps, dinp), time_median(s, flush, fb, reps, dweight)};
}

template <class Tuning>
void run_tiled(const char* name, Data& d, const Peer& peer, cudaStream_t s, char* flush,
               size_t fb, int reps) {
  const llmk_dev::TiledMatmul<Space, Tuning> t(d);
  const auto& dinp = t.dinp;
  const auto& dweight = t.dweight;
  Space exec;
  const float t_dinp = time_median(s, flush, fb, reps, [&] { dinp.run(exec, "dinp"); });
  const float t_dweight = time_median(s, flush, fb, reps, [&] { dweight.run(exec, "dweight"); });
  const double f = 2.0 * d.M * d.C * d.OC;
  std::printf(
      "%-22s M=%5lld C=%4lld OC=%5lld  dinp %7.3f ms %5.1f TF/s (%.2fx, split %lld, err %.1e)  "
      "dweight %7.3f ms %5.1f TF/s (%.2fx, split %lld, err %.1e)  both %.2fx\n",
      name, (long long)d.M, (long long)d.C, (long long)d.OC, t_dinp, f / t_dinp / 1e9,
      peer.dinp_ms / t_dinp, t.dinp_split(),
      rel_diff(d.dinp, d.dinp_ref), t_dweight, f / t_dweight / 1e9, peer.dweight_ms / t_dweight,
      t.dweight_split(),
      rel_diff(d.dweight, d.dweight_ref), (peer.dinp_ms + peer.dweight_ms) / (t_dinp + t_dweight));
}


// ---- attention's products -----------------------------------------------------
// GPT-2's attention backward per (batch b, head h), B = 8, NH = 12, T = 1024,
// HS = 64 (C = 768), as llm.c's attention_backward computes it:
//   dv = attᵀ·dout_h (TN), datt = dout_h·vᵀ (NT), dq = dpreatt·k·α (NN),
//   dk = dpreattᵀ·q·α (TN), α = 1/√HS,
// att and dpreatt (B, NH, T, T), datt likewise. cuBLAS's strided batches need
// one stride per operand, so cuBLAS runs on permuted (B, NH, T, HS) copies of
// q, k, v, dout_h and writes dq, dk, dv that way (llm.c permutes before its
// cublasSgemmStridedBatched); tiled runs on those copies too (two-level
// strides T·HS and NH·T·HS) and on the unpermuted (B, T, 3C) qkv and (B, T, C)
// dout, heads side by side within rows, writing into a (B, T, 3C) dqkv (the
// permutes this saves are not timed). Each line: cuBLAS's time, tiled's on
// the permuted copies (its ratio to cuBLAS, its split-K workspace, its largest
// difference from cuBLAS relative to cuBLAS's largest element), tiled's on
// the unpermuted layout (ratio, difference from tiled's permuted run: the
// same sums in the same order, expected 0). bf16 inputs: cuBLAS through
// cublasGemmStridedBatchedEx (bf16 in, float out, CUBLAS_COMPUTE_32F: its
// tensor cores), tiled widening bf16 as it stages (float FMAs).
struct Attention {
  index_t B = 8, NH = 12, T = 1024, HS = 64;
  index_t C() const { return NH * HS; }
  index_t heads() const { return B * NH; }
};

template <class T>
using Buf = Kokkos::View<T*, Space>;

template <class T>
void fill(const Buf<T>& v, unsigned seed) {
  fill(Mat<T>(v.data(), v.size(), 1), seed);
}

// A matrix operand of every head: buffer `buffer` (AttentionData's
// inputs), from element offset on, head (b, h) at b·outer + h·inner, rows
// ld apart.
struct Where {
  int buffer;
  index_t offset, ld, outer, inner;
};

// One product of every head: D (R × N) = α·op(A)·op(B); where its operands
// lie in the unpermuted layout and in the permuted one. D is datt (B, NH, T,
// T), or dv, dq or dk: columns of dqkv, or their own permuted buffer.
struct AttentionProduct {
  const char* name;
  bool ta, tb;
  index_t R, N, K;
  float alpha;
  Where a_qkv, b_qkv, a_perm, b_perm;
  bool d_is_att;
  Where d_qkv, d_perm;  // (their `buffer`: 0 datt, 1 dqkv or the permuted output)
};

// The permuted copies in[3..6]: q, k, v of qkv's head h (columns h·HS,
// C + h·HS, 2C + h·HS) and dout's, as (B, NH, T, HS). (A free function:
// nvcc takes no extended lambda in a constructor.)
template <class T>
void permute_heads(const Attention& at, const Buf<T> (&in)[7]) {
  const index_t T_ = at.T, HS = at.HS, C = at.C(), NH = at.NH;
  const index_t hd = at.heads() * at.T * at.HS;
  const T* qkv = in[1].data();
  const T* dout = in[2].data();
  T* q = in[3].data();
  T* k = in[4].data();
  T* v = in[5].data();
  T* dp = in[6].data();
  Kokkos::parallel_for(
      "permute", Kokkos::RangePolicy<Space, Kokkos::IndexType<index_t>>(0, hd),
      KOKKOS_LAMBDA(const index_t i) {
        const index_t d = i % HS, t = i / HS % T_, h = i / (HS * T_) % NH, b = i / (HS * T_ * NH);
        const index_t row = b * T_ + t;
        q[i] = qkv[row * 3 * C + h * HS + d];
        k[i] = qkv[row * 3 * C + C + h * HS + d];
        v[i] = qkv[row * 3 * C + 2 * C + h * HS + d];
        dp[i] = dout[row * C + h * HS + d];
      });
  Kokkos::fence();
}

// The buffers of one precision. Inputs: 0 att (dpreatt), 1 qkv (B, T, 3C),
// 2 dout (B, T, C), 3, 4, 5, 6 their permuted q, k, v, dout (B, NH, T, HS).
// Outputs [datt, the other]: of the unpermuted run (datt, dqkv), of the
// permuted run and of cuBLAS (datt, a (B, NH, T, HS) dv, dq or dk).
template <class T>
struct AttentionData {
  Buf<T> in[7];
  Buf<float> qkv_out[2], perm_out[2], cublas_out[2];
  explicit AttentionData(const Attention& at) {
    const index_t att = at.heads() * at.T * at.T, hd = at.heads() * at.T * at.HS;
    const index_t sizes[7] = {att, at.B * at.T * 3 * at.C(), at.B * at.T * at.C(), hd, hd, hd, hd};
    for (int i = 0; i < 7; ++i) in[i] = Buf<T>("attention_in", sizes[i]);
    for (int i = 0; i < 2; ++i) {
      qkv_out[i] = Buf<float>("attention_qkv_out", i == 0 ? att : sizes[1]);
      perm_out[i] = Buf<float>("attention_perm_out", i == 0 ? att : hd);
      cublas_out[i] = Buf<float>("attention_cublas_out", i == 0 ? att : hd);
    }
    fill(in[0], 11);
    fill(in[1], 12);
    fill(in[2], 13);
    permute_heads(at, in);
  }
};

std::vector<AttentionProduct> attention_products(const Attention& at) {
  const index_t T = at.T, HS = at.HS, C = at.C(), NH = at.NH;
  const float alpha = 1.0f / std::sqrt(float(HS));
  const Where att{0, 0, T, NH * T * T, T * T};  // att, dpreatt, datt
  auto perm = [&](int buffer) { return Where{buffer, 0, HS, NH * T * HS, T * HS}; };
  const Where dout{2, 0, C, T * C, HS};
  auto qkv = [&](int part) { return Where{1, part * C, 3 * C, T * 3 * C, HS}; };  // q, k, v
  const Where out = perm(1);
  return {
      {"dv = att^T dout_h", true, false, T, HS, T, 1.0f, att, dout, att, perm(6), false, qkv(2), out},
      {"datt = dout_h v^T", false, true, T, T, HS, 1.0f, dout, qkv(2), perm(6), perm(5), true, att,
       att},
      {"dq = dpreatt k a", false, false, T, HS, T, alpha, att, qkv(1), att, perm(4), false, qkv(0),
       out},
      {"dk = dpreatt^T q a", true, false, T, HS, T, alpha, att, qkv(0), att, perm(3), false, qkv(1),
       out},
  };
}

template <class TIn>
void cublas_attention(const AttentionProduct& p, const Attention& at, AttentionData<TIn>& data,
                      cublasHandle_t h) {
  const Where &a = p.a_perm, &b = p.b_perm, &d = p.d_perm;
  const TIn* A = data.in[a.buffer].data();
  const TIn* B = data.in[b.buffer].data();
  float* D = data.cublas_out[p.d_is_att ? 0 : 1].data();
  const float zero = 0;
  // Row-major D = op(A)·op(B) is column-major Dᵀ = op(B)ᵀ·op(A)ᵀ; one stride
  // per operand (the permuted layout has them: inner, NH·inner = outer).
  const cublasOperation_t ta = p.tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t tb = p.ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  if constexpr (std::is_same_v<TIn, float>) {
    check(cublasSgemmStridedBatched(h, ta, tb, p.N, p.R, p.K, &p.alpha, B, b.ld, b.inner, A, a.ld,
                                    a.inner, &zero, D, d.ld, d.inner, at.heads()),
          "sgemm strided batched");
  } else {
    check(cublasGemmStridedBatchedEx(h, ta, tb, p.N, p.R, p.K, &p.alpha, B, CUDA_R_16BF, b.ld,
                                     b.inner, A, CUDA_R_16BF, a.ld, a.inner, &zero, D, CUDA_R_32F,
                                     d.ld, d.inner, at.heads(), CUBLAS_COMPUTE_32F,
                                     CUBLAS_GEMM_DEFAULT),
          "gemm strided batched ex");
  }
}

// The tiled product of every head, on the unpermuted layout or the permuted
// copies: a batch of B × NH products.
template <bool TA, bool TB, class TIn>
struct TiledAttention {
  using Gemm = llmk::kernels::TiledGemm<llmk::kernels::GemmForm<TA, TB, true>, Space, TIn, float,
                                        llmk::kernels::ScaleEpilogue>;
  static llmk::kernels::GemmShape shape(const AttentionProduct& p, const Attention& at) {
    return {p.R, p.N, p.K, at.B, at.NH};
  }
  static Gemm make(const AttentionProduct& p, const Attention& at, AttentionData<TIn>& data,
                   const bool permuted, float* ws) {
    const Where& a = permuted ? p.a_perm : p.a_qkv;
    const Where& b = permuted ? p.b_perm : p.b_qkv;
    const Where& d = permuted ? p.d_perm : p.d_qkv;
    const TIn* A = data.in[a.buffer].data() + a.offset;
    const TIn* B = data.in[b.buffer].data() + b.offset;
    float* D = (permuted ? data.perm_out : data.qkv_out)[p.d_is_att ? 0 : 1].data() + d.offset;
    return Gemm(shape(p, at), {D, d.ld, d.outer, d.inner}, {A, a.ld, a.outer, a.inner},
                {B, b.ld, b.outer, b.inner}, true, llmk::kernels::ScaleEpilogue{p.alpha})
        .with_split_k(ws);
  }
};

// max |x − y| / max |y| over the elements f(i) of two device buffers
// (f: x's index of y's element i).
template <class F>
double rel_diff(const Buf<float>& x, const Buf<float>& y, const index_t n, const F& f) {
  auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
  auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
  double diff = 0, scale = 0;
  for (index_t i = 0; i < n; ++i) {
    diff = std::max(diff, std::abs(double(hx(f(i))) - hy(i)));
    scale = std::max(scale, std::abs(double(hy(i))));
  }
  return scale > 0 ? diff / scale : diff;
}

template <bool TA, bool TB, class TIn>
void time_attention_product(const AttentionProduct& p, const Attention& at,
                            AttentionData<TIn>& data, cublasHandle_t h, cudaStream_t s,
                            char* flush, size_t fb, int reps) {
  using Tiled = TiledAttention<TA, TB, TIn>;
  const size_t ws = Tiled::Gemm::split_k_workspace(Tiled::shape(p, at), false);
  Kokkos::View<float*, Space> workspace("workspace", ws + 64);
  const auto perm = Tiled::make(p, at, data, true, workspace.data());
  const auto qkv = Tiled::make(p, at, data, false, workspace.data());
  Space exec;
  const float t_cublas = time_median(s, flush, fb, reps, [&] { cublas_attention(p, at, data, h); });
  const float t_perm = time_median(s, flush, fb, reps, [&] { perm.run(exec, "attention_perm"); });
  const float t_qkv = time_median(s, flush, fb, reps, [&] { qkv.run(exec, "attention_qkv"); });
  Kokkos::fence();
  const int out = p.d_is_att ? 0 : 1;
  const index_t n = p.R * p.N * at.heads();
  const double err = rel_diff(data.perm_out[out], data.cublas_out[out], n, [](index_t i) { return i; });
  // The unpermuted run against the permuted one: element i = ((b·NH + h)·R
  // + r)·N + c of the permuted output is (b, h)'s (r, c) in the other.
  const Where d = p.d_qkv;
  const double same = rel_diff(data.qkv_out[out], data.perm_out[out], n, [&](index_t i) {
    const index_t c = i % p.N, r = i / p.N % p.R, hh = i / (p.N * p.R) % at.NH;
    const index_t b = i / (p.N * p.R * at.NH);
    return d.offset + b * d.outer + hh * d.inner + r * d.ld + c;
  });
  const double f = 2.0 * p.R * p.N * p.K * at.heads();
  std::printf(
      "attention %-19s %s%s %s  cuBLAS strided %7.3f ms %5.1f TF/s  tiled permuted %7.3f ms "
      "(%.2fx, split %lld, err %.1e)  tiled qkv layout %7.3f ms (%.2fx, vs permuted %.1e)\n",
      p.name, TA ? "T" : "N", TB ? "T" : "N", std::is_same_v<TIn, float> ? "fp32" : "bf16",
      t_cublas, f / t_cublas / 1e9, t_perm, t_cublas / t_perm, (long long)ws, err, t_qkv,
      t_cublas / t_qkv, same);
}

template <class TIn>
void run_attention(cublasHandle_t h, cudaStream_t s, char* flush, size_t fb) {
  const Attention at;
  AttentionData<TIn> data(at);
  const int reps = 20;
  for (const AttentionProduct& p : attention_products(at)) {
    if (p.ta && !p.tb) time_attention_product<true, false, TIn>(p, at, data, h, s, flush, fb, reps);
    if (!p.ta && p.tb) time_attention_product<false, true, TIn>(p, at, data, h, s, flush, fb, reps);
    if (!p.ta && !p.tb) time_attention_product<false, false, TIn>(p, at, data, h, s, flush, fb, reps);
  }
}
}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "quick") == 0;
  const bool attention_only = argc > 1 && std::strcmp(argv[1], "attention") == 0;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  Kokkos::initialize(argc, argv);
  {
    const cudaStream_t s = Space().cuda_stream();
    cublasHandle_t h;
    check(cublasCreate(&h), "cublas");
    check(cublasSetStream(h, s), "stream");
    const size_t fb = size_t(256) << 20;
    char* flush;
    check(cudaMalloc(&flush, fb), "malloc");
    struct Shape {
      index_t M, C, OC;
    };
    for (const Shape sh : {Shape{8192, 768, 3072}, Shape{8192, 768, 50304}, Shape{1024, 768, 3072},
                           Shape{8192, 768, 50257}, Shape{4096, 768, 768}}) {
      if (attention_only) break;
      Data d(sh.M, sh.C, sh.OC);
      const int reps = sh.OC > 10000 ? 5 : 20;
      const Peer peer = run_cublas(d, h, s, flush, fb, reps);
      const double f = 2.0 * d.M * d.C * d.OC;
      std::printf("%-22s M=%5lld C=%4lld OC=%5lld  dinp %7.3f ms %5.1f TF/s  dweight %7.3f ms %5.1f TF/s\n",
                  "cublasSgemm", (long long)d.M, (long long)d.C, (long long)d.OC, peer.dinp_ms,
                  f / peer.dinp_ms / 1e9, peer.dweight_ms, f / peer.dweight_ms / 1e9);
      run_tiled<Base>("tiled (shipped)", d, peer, s, flush, fb, reps);
      if (quick) continue;
#ifndef TILED_BENCH_SHIPPED_ONLY  // (a faster build while tuning)
      run_tiled<Tune<Base::stages, false>>("  no split-K", d, peer, s, flush, fb, reps);
      run_tiled<Tune<1, Base::split_k>>("  one buffer", d, peer, s, flush, fb, reps);
      run_tiled<Tune<Base::stages, Base::split_k, 8>>("  bk 8", d, peer, s, flush, fb, reps);
      run_tiled<FourWarps<16>>("  4 warps 32x4, bk 16", d, peer, s, flush, fb, reps);
      run_tiled<EightByEight<16>>("  8x8 of 64x256, bk 16", d, peer, s, flush, fb, reps);
      run_tiled<Async<false, false, false>>("  no cp.async", d, peer, s, flush, fb, reps);
      run_tiled<Async<false, true, true>>("  cp.async B of dinp", d, peer, s, flush, fb, reps);
      run_tiled<Async<true, true, true>>("  cp.async all", d, peer, s, flush, fb, reps);
      run_tiled<Unrolled<0, 0>>("  k loop rolled", d, peer, s, flush, fb, reps);
      run_tiled<Unrolled<2, 4>>("  k unrolled 2 / 4", d, peer, s, flush, fb, reps);
      run_tiled<Unrolled<2, 2, FourWarps<16>>>("  4 warps, k unrolled 2", d, peer, s, flush, fb, reps);
      run_tiled<Unrolled<2, 2, EightByEight<16>>>("  8x8, k unrolled 2", d, peer, s, flush, fb, reps);
#endif
    }
    run_attention<float>(h, s, flush, fb);
    run_attention<llmk::bf16>(h, s, flush, fb);
    cudaFree(flush);
    cublasDestroy(h);
  }
  Kokkos::finalize();
}
