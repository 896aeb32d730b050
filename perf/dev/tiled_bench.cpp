// Development benchmark of kernels/gemm_tiled.hpp on a CUDA GPU: matmul's two
// GEMMs (dinp = dout·W, dweight = doutᵀ·inp with the fused dbias) through
// TiledGemm in several tunings, against cublasSgemm on the same data in the
// same run, each result compared with cuBLAS's. Not part of the build:
// perf/dev/tiled_bench.sh compiles it (docs/performance.md has what it
// measured on an H200). Arguments: none, or "quick" for the first tuning only.
#include <kernels/gemm_tiled.hpp>

#include "dev_timing.hpp"

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
  template <bool TransA>
  static constexpr int k_unroll = TransA ? Dweight : Dinp;
};

// AsyncCopy for dinp's A and B (DinpA, DinpB) and dweight's (both: Dweight).
template <bool DinpA, bool DinpB, bool Dweight, class T = Base>
struct Async : T {
  template <bool TransA>
  static constexpr bool async_a = TransA ? Dweight : DinpA;
  template <bool TransA>
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
using Mat = Kokkos::View<T**, Kokkos::LayoutRight, Space>;

template <class T>
void fill(const Mat<T>& m, unsigned seed) {
  const index_t n = m.size();
  T* p = m.data();
  Kokkos::parallel_for(
      "fill", Kokkos::RangePolicy<Space, Kokkos::IndexType<index_t>>(0, n),
      KOKKOS_LAMBDA(const index_t i) {
        unsigned x = unsigned(i) * 2654435761u + seed;
        x ^= x >> 13;
        x *= 0x5bd1e995u;
        x ^= x >> 15;
        p[i] = T(float(x % 2001) / 1000.0f - 1.0f);
      });
}

// max |a - b| / max |b| over two float matrices.
double rel_diff(const Mat<float>& a, const Mat<float>& b) {
  auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a);
  auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b);
  double diff = 0, scale = 0;
  for (size_t i = 0; i < ha.size(); ++i) {
    diff = std::max(diff, std::abs(double(ha.data()[i]) - hb.data()[i]));
    scale = std::max(scale, std::abs(double(hb.data()[i])));
  }
  return scale > 0 ? diff / scale : diff;
}

struct Data {
  index_t M, C, OC;
  Mat<float> dout, weight, inp, dinp, dweight, dinp_ref, dweight_ref;
  Kokkos::View<float*, Space> dbias;
  Data(index_t M_, index_t C_, index_t OC_)
      : M(M_), C(C_), OC(OC_), dout("dout", M, OC), weight("weight", OC, C), inp("inp", M, C),
        dinp("dinp", M, C), dweight("dweight", OC, C), dinp_ref("dinp_ref", M, C),
        dweight_ref("dweight_ref", OC, C), dbias("dbias", OC) {
    fill(dout, 1);
    fill(weight, 2);
    fill(inp, 3);
  }
};

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
  using Dinp = llmk::kernels::TiledGemm<false, false, Space, float, float, float, Tuning>;
  using Dweight = llmk::kernels::TiledGemm<true, true, Space, float, float, float, Tuning>;
  const size_t ws = std::max(Dinp::split_k_workspace(d.M, d.C, d.OC, false),
                             Dweight::split_k_workspace(d.OC, d.C, d.M, true));
  Kokkos::View<float*, Space> workspace("workspace", ws + 64);
  Space exec;
  const Dinp dinp = Dinp(d.dinp, d.dout, d.weight, true).with_split_k(workspace.data());
  const Dweight dweight =
      Dweight(d.dweight, d.dout, d.inp, true).with_bias(d.dbias, true).with_split_k(workspace.data());
  const float t_dinp = time_median(s, flush, fb, reps, [&] { dinp.run(exec, "dinp"); });
  const float t_dweight = time_median(s, flush, fb, reps, [&] { dweight.run(exec, "dweight"); });
  const double f = 2.0 * d.M * d.C * d.OC;
  std::printf(
      "%-22s M=%5lld C=%4lld OC=%5lld  dinp %7.3f ms %5.1f TF/s (%.2fx, split %lld, err %.1e)  "
      "dweight %7.3f ms %5.1f TF/s (%.2fx, split %lld, err %.1e)  both %.2fx\n",
      name, (long long)d.M, (long long)d.C, (long long)d.OC, t_dinp, f / t_dinp / 1e9,
      peer.dinp_ms / t_dinp, (long long)Dinp::split_k_workspace(d.M, d.C, d.OC, false),
      rel_diff(d.dinp, d.dinp_ref), t_dweight, f / t_dweight / 1e9, peer.dweight_ms / t_dweight,
      (long long)Dweight::split_k_workspace(d.OC, d.C, d.M, true),
      rel_diff(d.dweight, d.dweight_ref), (peer.dinp_ms + peer.dweight_ms) / (t_dinp + t_dweight));
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "quick") == 0;
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
    cudaFree(flush);
    cublasDestroy(h);
  }
  Kokkos::finalize();
}
