// Development benchmark of kernels/gemm_tiled.hpp on a host (Kokkos::OpenMP):
// matmul's two GEMMs at GPT-2 124M's shapes (dinp = dout·W, dweight = doutᵀ·inp
// with the fused dbias; perf/dev/matmul_gemms.hpp) through TiledGemm in several host
// tunings, against OpenBLAS's cblas_sgemm on the same data in the same run
// (its threads on the same OpenMP pool), each result compared with OpenBLAS's.
// Not part of the build: perf/dev/tiled_host_bench.sh compiles it.
// Arguments: [M] (rows, default 2048: B 8, T 256) [reps] (default 5).
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ops/matmul_backward/tiled.hpp>
#include <string>
#include <vector>

#include "matmul_gemms.hpp"

namespace {

using Space = Kokkos::OpenMP;
using llmk::index_t;
using Base = llmk::kernels::TiledTuning<Space>;

// A host tuning: micro-tile TM × TN, tile BM × BN over chunks of BK.
template <int TM, int TN, int BM, int BN, int BK = Base::bk>
struct Tile : Base {
  static constexpr int tm = TM, tn = TN, bm = BM, bn = BN, bk = BK;
};

using Data = llmk_dev::MatmulData<Space>;
using llmk_dev::rel_diff;

template <class F>
double median_ms(int reps, F&& f) {
  f();  // warm-up (first touch, OpenMP pool)
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const double t0 = omp_get_wtime();
    f();
    t.push_back((omp_get_wtime() - t0) * 1e3);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct Peer {
  double dinp_ms, dweight_ms;
};

Peer run_openblas(Data& d, int reps) {
  auto dinp = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, d.M, d.C, d.OC, 1, d.dout.data(),
                d.OC, d.weight.data(), d.C, 0, d.dinp_ref.data(), d.C);
  };
  auto dweight = [&] {
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, d.OC, d.C, d.M, 1, d.dout.data(), d.OC,
                d.inp.data(), d.C, 0, d.dweight_ref.data(), d.C);
  };
  return {median_ms(reps, dinp), median_ms(reps, dweight)};
}

double gflops(const Data& d, double ms) { return d.flops() / ms / 1e6; }
double peak = 0;  // GFLOP/s, measured_peak_gflops()

// The host's float FMA peak, measured: every thread runs independent chains
// of vector multiply-adds in registers (28 on AVX-512, 12 with 16 vector
// registers: more than the FMA units' latency × throughput), no memory; GFLOP/s of all
// threads together, the best of 5 runs of ~0.1 s. The clock it runs at is the
// one the GEMMs get (turbo included), which a peak derived from the base
// clock is not.
double measured_peak_gflops() {
  using llmk::kernels::detail::Floats;
  constexpr int chains = llmk::kernels::detail::kRegisters - 4, L = llmk::kernels::detail::kLanes;
  const long iterations = 20'000'000;  // ~0.1 s a run at 3 GHz: past the clock's ramp
  double best = 0;
  for (int run = 0; run < 5; ++run) {
    double sink = 0;
    const double t0 = omp_get_wtime();
#pragma omp parallel reduction(+ : sink)
    {
      Floats acc[chains];
      for (int c = 0; c < chains; ++c) acc[c] = llmk::kernels::detail::broadcast(1e-3f * c);
      const Floats x = llmk::kernels::detail::broadcast(0.999f),
                   y = llmk::kernels::detail::broadcast(1e-6f);
      for (long i = 0; i < iterations; ++i) {
        LLMK_UNROLL for (int c = 0; c < chains; ++c) acc[c] = acc[c] * x + y;
      }
      for (int c = 0; c < chains; ++c) sink += acc[c][0];
    }
    const double seconds = omp_get_wtime() - t0;
    const double flops = 2.0 * L * chains * iterations * omp_get_max_threads();
    best = std::max(best, flops / seconds / 1e9);
    if (sink == 42) std::printf(" ");
  }
  return best;
}

template <class Tuning, class DweightTuning = Tuning>
void run_tiled(const char* name, Data& d, const Peer& peer, int reps) {
  const llmk_dev::TiledMatmul<Space, Tuning, DweightTuning> t(d);
  Space exec;
  const double t_dinp = median_ms(reps, [&] {
    t.dinp.run(exec, "dinp");
    exec.fence();
  });
  const double t_dweight = median_ms(reps, [&] {
    t.dweight.run(exec, "dweight");
    exec.fence();
  });
  std::printf("%-24s %5lld %4lld %5lld  dinp %8.3f ms %6.0f GF/s %3.0f%% (%.2fx, err %.0e)  "
              "dweight %8.3f ms %6.0f GF/s %3.0f%% (%.2fx, err %.0e)  both %.2fx\n",
              name, (long long)d.M, (long long)d.C, (long long)d.OC, t_dinp, gflops(d, t_dinp),
              100 * gflops(d, t_dinp) / peak, peer.dinp_ms / t_dinp,
              rel_diff(d.dinp, d.dinp_ref), t_dweight, gflops(d, t_dweight),
              100 * gflops(d, t_dweight) / peak, peer.dweight_ms / t_dweight,
              rel_diff(d.dweight, d.dweight_ref),
              (peer.dinp_ms + peer.dweight_ms) / (t_dinp + t_dweight));
}

}  // namespace

int main(int argc, char** argv) {
  const index_t M = argc > 1 ? std::atoll(argv[1]) : 2048;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  Kokkos::initialize(argc, argv);
  {
    peak = measured_peak_gflops();
    std::printf("threads %d; measured FMA peak %.0f GFLOP/s (%d-float vectors); rows: name M C "
                "OC, dinp and dweight (+ dbias): ms, GFLOP/s, %% of the peak, the ratio OpenBLAS "
                "time / tiled time\n",
                Space().concurrency(), peak, llmk::kernels::detail::kLanes);
    struct Shape {
      index_t C, OC;
    };
    for (const Shape sh : {Shape{768, 2304}, Shape{768, 768}, Shape{768, 3072}, Shape{3072, 768},
                           Shape{768, 50304}}) {
      Data d(M, sh.C, sh.OC);
      const int r = sh.OC > 10000 ? std::max(1, reps / 2) : reps;
      const Peer peer = run_openblas(d, r);
      std::printf("%-24s %5lld %4lld %5lld  dinp %8.3f ms %6.0f GF/s %3.0f%%                   "
                  "dweight %8.3f ms %6.0f GF/s %3.0f%%\n",
                  "openblas sgemm", (long long)M, (long long)d.C, (long long)d.OC, peer.dinp_ms,
                  gflops(d, peer.dinp_ms), 100 * gflops(d, peer.dinp_ms) / peak, peer.dweight_ms,
                  gflops(d, peer.dweight_ms), 100 * gflops(d, peer.dweight_ms) / peak);
      static const std::string shipped = "tiled (shipped " + std::to_string(Base::tm) + "x" +
                                         std::to_string(Base::tn) + ")";
      run_tiled<Base, llmk::op::matmul_backward::DweightTuning<Space>>(shipped.c_str(), d, peer, r);
#ifndef TILED_HOST_BENCH_SHIPPED_ONLY
      run_tiled<Tile<8, 32, 128, 768>>("  8x32 of 128x768", d, peer, r);
      run_tiled<Tile<12, 32, 96, 768>>("  12x32 of 96x768", d, peer, r);
      run_tiled<Tile<8, 48, 128, 768>>("  8x48 of 128x768", d, peer, r);
      run_tiled<Tile<8, 48, 128, 384>>("  8x48 of 128x384", d, peer, r);
      run_tiled<Tile<8, 48, 64, 768>>("  8x48 of 64x768", d, peer, r);
      run_tiled<Tile<8, 48, 128, 768, 256>>("  8x48 of 128x768, bk 256", d, peer, r);
      run_tiled<Tile<8, 48, 128, 768, 64>>("  8x48 of 128x768, bk 64", d, peer, r);
      run_tiled<Tile<6, 48, 96, 768>>("  6x48 of 96x768", d, peer, r);
      run_tiled<Tile<10, 48, 120, 768>>("  10x48 of 120x768", d, peer, r);
#endif
    }
  }
  Kokkos::finalize();
}
