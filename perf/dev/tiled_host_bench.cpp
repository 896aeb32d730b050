// Development benchmark of kernels/gemm_tiled.hpp on a host (Kokkos::OpenMP):
// matmul's two GEMMs at GPT-2 124M's shapes (dinp = dout·W with GELU's factor,
// dweight = doutᵀ·inp with the fused dbias) through TiledGemm in several host
// tunings, against OpenBLAS's cblas_sgemm on the same data in the same run
// (its threads on the same OpenMP pool), each result compared with OpenBLAS's.
// Not part of the build: perf/dev/tiled_host_bench.sh compiles it (once as the
// compiler vectorizes by default, once with 512-bit vectors preferred).
// Arguments: [M] (rows, default 2048: B 8, T 256) [reps] (default 5).
#include <kernels/gemm_tiled.hpp>

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

using Space = Kokkos::OpenMP;
using llmk::index_t;
using Base = llmk::kernels::TiledTuning<Space>;

// A host tuning: micro-tile TM × TN, tile BM × BN over chunks of BK.
template <int TM, int TN, int BM, int BN, int BK = Base::bk>
struct Tile : Base {
  static constexpr int tm = TM, tn = TN, bm = BM, bn = BN, bk = BK;
};

template <class T>
using Mat = Kokkos::View<T**, Kokkos::LayoutRight, Space>;

void fill(const Mat<float>& m, unsigned seed) {
  float* p = m.data();
  for (size_t i = 0; i < m.size(); ++i) {
    unsigned x = unsigned(i) * 2654435761u + seed;
    x ^= x >> 13;
    x *= 0x5bd1e995u;
    x ^= x >> 15;
    p[i] = float(x % 2001) / 1000.0f - 1.0f;
  }
}

double rel_diff(const Mat<float>& a, const Mat<float>& b) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::abs(double(a.data()[i]) - b.data()[i]));
    scale = std::max(scale, std::abs(double(b.data()[i])));
  }
  return scale > 0 ? diff / scale : diff;
}

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

struct Data {
  index_t M, C, OC;
  Mat<float> dout, weight, inp, pre, dinp, dweight, dinp_ref, dweight_ref;
  Kokkos::View<float*, Space> dbias;
  Data(index_t M_, index_t C_, index_t OC_)
      : M(M_), C(C_), OC(OC_), dout("dout", M, OC), weight("weight", OC, C), inp("inp", M, C),
        pre("pre", M, C), dinp("dinp", M, C), dweight("dweight", OC, C),
        dinp_ref("dinp_ref", M, C), dweight_ref("dweight_ref", OC, C), dbias("dbias", OC) {
    fill(dout, 1);
    fill(weight, 2);
    fill(inp, 3);
  }
};

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

double gflops(const Data& d, double ms) { return 2.0 * d.M * d.C * d.OC / ms / 1e6; }

template <class Tuning>
void run_tiled(const char* name, Data& d, const Peer& peer, int reps) {
  namespace kn = llmk::kernels;
  using Dinp = kn::TiledGemm<kn::GemmForm<false, false>, Space, float, float, kn::PlainEpilogue,
                             void, Tuning>;
  using Dweight = kn::TiledGemm<kn::GemmForm<true, false>, Space, float, float, kn::PlainEpilogue,
                                float, Tuning>;
  const kn::GemmShape dinp_shape{d.M, d.C, d.OC}, dweight_shape{d.OC, d.C, d.M};
  const size_t ws = std::max(Dinp::split_k_workspace(dinp_shape, false),
                             Dweight::split_k_workspace(dweight_shape, true));
  Kokkos::View<float*, Space> workspace("workspace", ws + 64);
  Space exec;
  using kn::gemm_operand;
  const Dinp dinp = Dinp(dinp_shape, gemm_operand(d.dinp), gemm_operand(d.dout),
                         gemm_operand(d.weight), true)
                        .with_split_k(workspace.data());
  const Dweight dweight = Dweight(dweight_shape, gemm_operand(d.dweight), gemm_operand(d.dout),
                                  gemm_operand(d.inp), true)
                              .with_bias(d.dbias, true)
                              .with_split_k(workspace.data());
  const double t_dinp = median_ms(reps, [&] {
    dinp.run(exec, "dinp");
    exec.fence();
  });
  const double t_dweight = median_ms(reps, [&] {
    dweight.run(exec, "dweight");
    exec.fence();
  });
  std::printf("%-24s %5lld %4lld %5lld  dinp %8.3f ms %6.0f GF/s (%.2fx, err %.0e)  "
              "dweight %8.3f ms %6.0f GF/s (%.2fx, err %.0e)  both %.2fx\n",
              name, (long long)d.M, (long long)d.C, (long long)d.OC, t_dinp, gflops(d, t_dinp),
              peer.dinp_ms / t_dinp, rel_diff(d.dinp, d.dinp_ref), t_dweight,
              gflops(d, t_dweight), peer.dweight_ms / t_dweight,
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
    std::printf("threads %d; rows: name M C OC, dinp and dweight (+ dbias) with the ratio "
                "OpenBLAS time / tiled time\n",
                Space().concurrency());
    struct Shape {
      index_t C, OC;
    };
    for (const Shape sh : {Shape{768, 2304}, Shape{768, 768}, Shape{768, 3072}, Shape{3072, 768},
                           Shape{768, 50304}}) {
      Data d(M, sh.C, sh.OC);
      const int r = sh.OC > 10000 ? std::max(1, reps / 2) : reps;
      const Peer peer = run_openblas(d, r);
      std::printf("%-24s %5lld %4lld %5lld  dinp %8.3f ms %6.0f GF/s                       "
                  "dweight %8.3f ms %6.0f GF/s\n",
                  "openblas sgemm", (long long)M, (long long)d.C, (long long)d.OC, peer.dinp_ms,
                  gflops(d, peer.dinp_ms), peer.dweight_ms, gflops(d, peer.dweight_ms));
      run_tiled<Base>("tiled (shipped 4x24)", d, peer, r);
#ifndef TILED_HOST_BENCH_SHIPPED_ONLY
      run_tiled<Tile<8, 32, 128, 768>>("  8x32 of 128x768", d, peer, r);
      run_tiled<Tile<8, 32, 128, 256>>("  8x32 of 128x256", d, peer, r);
      run_tiled<Tile<6, 32, 96, 768>>("  6x32 of 96x768", d, peer, r);
      run_tiled<Tile<12, 32, 96, 384>>("  12x32 of 96x384", d, peer, r);
      run_tiled<Tile<4, 48, 128, 768>>("  4x48 of 128x768", d, peer, r);
      run_tiled<Tile<8, 24, 128, 768>>("  8x24 of 128x768", d, peer, r);
      run_tiled<Tile<4, 24, 64, 384>>("  4x24 of 64x384", d, peer, r);
#endif
    }
  }
  Kokkos::finalize();
}
