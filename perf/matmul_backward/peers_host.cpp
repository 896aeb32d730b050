// Host peers: the seed's CPU reference loops (OpenMP) and OpenBLAS sgemm.
#include "peers.hpp"

#include <cblas.h>

#include <vector>

namespace llmk::perf::matmul_backward {
namespace {

// The seed's CPU loops, parallelised as the seed does: dinp over rows (b, t),
// dweight over output channels o, dbias summed in double alongside dweight.
// Unlike the seed, dbias accumulates (+=) as llmk's gradients do.
void seed_cpu_loops(const PeerArgs& a) {
  const index_t M = a.M, C = a.C, OC = a.OC;
#pragma omp parallel for num_threads(a.threads)
  for (index_t m = 0; m < M; ++m) {  // the seed's collapse(2) over b, t is this loop over rows
    const float* dout_m = a.dout + m * OC;
    float* dinp_m = a.dinp + m * C;
    for (index_t o = 0; o < OC; ++o) {
      const float* w_o = a.weight + o * C;
      const float d = dout_m[o];
      for (index_t c = 0; c < C; ++c) dinp_m[c] += w_o[c] * d;
    }
  }
#pragma omp parallel for num_threads(a.threads)
  for (index_t o = 0; o < OC; ++o) {
    float* dw_o = a.dweight + o * C;
    double sum = 0.0;
    for (index_t m = 0; m < M; ++m) {
      const float* inp_m = a.inp + m * C;
      const float d = a.dout[m * OC + o];
      sum += d;
      for (index_t c = 0; c < C; ++c) dw_o[c] += inp_m[c] * d;
    }
    a.dbias[o] += float(sum);
  }
}

// dbias[o] += Σ_m dout[m, o]: each thread sums a block of rows into its own
// double partials (contiguous, vectorised), then the partials are combined.
void column_sum(const PeerArgs& a) {
  const index_t M = a.M, OC = a.OC;
  std::vector<double> total(static_cast<std::size_t>(OC), 0.0);
#pragma omp parallel num_threads(a.threads)
  {
    std::vector<double> partial(static_cast<std::size_t>(OC), 0.0);
    double* p = partial.data();
#pragma omp for schedule(static) nowait
    for (index_t m = 0; m < M; ++m) {
      const float* row = a.dout + m * OC;
#pragma omp simd
      for (index_t o = 0; o < OC; ++o) p[o] += row[o];
    }
#pragma omp critical(llmk_perf_column_sum)
    for (index_t o = 0; o < OC; ++o) total[o] += p[o];
  }
  for (index_t o = 0; o < OC; ++o) a.dbias[o] += float(total[o]);
}

// Two sgemm calls with beta = 1 (the gradients accumulate) and the column sum.
// Zero sizes: nothing to multiply (BLAS would refuse their leading dimensions).
void openblas(const PeerArgs& a) {
  const int M = int(a.M), C = int(a.C), OC = int(a.OC);
  if (M > 0 && C > 0 && OC > 0) {
  // dinp (M×C) += dout (M×OC) · weight (OC×C)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, C, OC, 1.0f, a.dout, OC, a.weight,
                C, 1.0f, a.dinp, C);
    // dweight (OC×C) += doutᵀ (OC×M) · inp (M×C)
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, OC, C, M, 1.0f, a.dout, OC, a.inp, C,
                1.0f, a.dweight, C);
  }
  column_sum(a);
}

}  // namespace

std::vector<Peer> host_peers() {
  const std::vector<std::string> host{"Serial", "OpenMP"};
  std::vector<Peer> peers(2);
  peers[0].name = "seed-cpu-loops";
  peers[0].backends = host;
  peers[0].run = seed_cpu_loops;
  peers[0].bias_kernel = "fused";  // dbias is summed in the dweight loop
  peers[0].description = "the seed's CPU loops (OpenMP)";
  peers[1].name = "openblas";
  peers[1].backends = host;
  peers[1].run = openblas;
  peers[1].bias_only = column_sum;
  peers[1].bias_kernel = "perf column_sum (OpenMP, double partials)";
  peers[1].int_sizes = true;
  peers[1].description = "2 × OpenBLAS sgemm + an OpenMP column sum";
  return peers;
}

}  // namespace llmk::perf::matmul_backward
