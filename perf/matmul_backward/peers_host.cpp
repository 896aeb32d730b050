// Host peers: the seed's CPU reference loops (OpenMP), OpenBLAS sgemm, and
// OpenBLAS sbgemm (bf16 products, float results) where this OpenBLAS has it.
#include "peers.hpp"

#include <llmk/bf16.hpp>

#include <cblas.h>
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace llmk::perf::matmul_backward {
namespace {

// The seed's CPU loops, parallelised as the seed does: dinp over rows (b, t),
// dweight over output channels o, dbias summed in double alongside dweight.
// Unlike the seed, dbias accumulates (+=) as llmk's gradients do.
// With overwrite_dinp, a row of dinp is zeroed before its sums.
void seed_cpu_loops(const PeerArgs& a) {
  const index_t M = a.M, C = a.C, OC = a.OC;
  float* const dinp = static_cast<float*>(a.dinp);
  float* const dweight = static_cast<float*>(a.dweight);
  float* const dbias = static_cast<float*>(a.dbias);
  const float* const dout = static_cast<const float*>(a.dout);
  const float* const inp = static_cast<const float*>(a.inp);
  const float* const weight = static_cast<const float*>(a.weight);
#pragma omp parallel for num_threads(a.threads)
  for (index_t m = 0; m < M; ++m) {  // the seed's collapse(2) over b, t is this loop over rows
    const float* dout_m = dout + m * OC;
    float* dinp_m = dinp + m * C;
    if (a.overwrite_dinp) std::fill(dinp_m, dinp_m + C, 0.0f);
    for (index_t o = 0; o < OC; ++o) {
      const float* w_o = weight + o * C;
      const float d = dout_m[o];
      for (index_t c = 0; c < C; ++c) dinp_m[c] += w_o[c] * d;
    }
  }
#pragma omp parallel for num_threads(a.threads)
  for (index_t o = 0; o < OC; ++o) {
    float* dw_o = dweight + o * C;
    double sum = 0.0;
    for (index_t m = 0; m < M; ++m) {
      const float* inp_m = inp + m * C;
      const float d = dout[m * OC + o];
      sum += d;
      for (index_t c = 0; c < C; ++c) dw_o[c] += inp_m[c] * d;
    }
    dbias[o] += float(sum);
  }
}

float widen(float x) { return x; }
float widen(bf16 x) { return float(x); }
template <class T>
T narrow(float x) {
  return T(x);
}

// dbias[o] += Σ_m dout[m, o]: each thread sums a block of rows into its own
// double partials (contiguous, vectorised), then the partials are combined.
template <class In, class Out>
void column_sum_typed(const PeerArgs& a) {
  const index_t M = a.M, OC = a.OC;
  const In* const dout = static_cast<const In*>(a.dout);
  Out* const dbias = static_cast<Out*>(a.dbias);
  std::vector<double> total(static_cast<std::size_t>(OC), 0.0);
#pragma omp parallel num_threads(a.threads)
  {
    std::vector<double> partial(static_cast<std::size_t>(OC), 0.0);
    double* p = partial.data();
#pragma omp for schedule(static) nowait
    for (index_t m = 0; m < M; ++m) {
      const In* row = dout + m * OC;
#pragma omp simd
      for (index_t o = 0; o < OC; ++o) p[o] += widen(row[o]);
    }
#pragma omp critical(llmk_perf_column_sum)
    for (index_t o = 0; o < OC; ++o) total[o] += p[o];
  }
  for (index_t o = 0; o < OC; ++o) dbias[o] = narrow<Out>(widen(dbias[o]) + float(total[o]));
}

void column_sum(const PeerArgs& a) { column_sum_typed<float, float>(a); }
void column_sum_bf16(const PeerArgs& a) {
  if (a.precision == "bf16") column_sum_typed<bf16, bf16>(a);
  else column_sum_typed<bf16, float>(a);
}

// GPT-2's GELU (tanh approximation) differentiated, written out here.
float gelu_grad(float x) {
  constexpr float s = 0.7978845608028654f;  // sqrt(2/π)
  constexpr float k = 0.044715f;
  const float t = std::tanh(s * (x + k * x * x * x));
  return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * s * (1.0f + 3.0f * k * x * x);
}

// dinp ⟵ product ⊙ gelu'(pre_gelu) (⊙ 1 without pre_gelu), = or += as the
// arguments say, from a float product (M × C) that is not dinp.
template <class Act>
void store_dinp(const PeerArgs& a, const float* product) {
  Act* const dinp = static_cast<Act*>(a.dinp);
  const Act* const pre = static_cast<const Act*>(a.pre_gelu);
  const index_t n = a.M * a.C;
  const bool overwrite = a.overwrite_dinp;
#pragma omp parallel for num_threads(a.threads)
  for (index_t i = 0; i < n; ++i) {
    const float g = pre ? gelu_grad(widen(pre[i])) : 1.0f;
    dinp[i] = narrow<Act>((overwrite ? 0.0f : widen(dinp[i])) + product[i] * g);
  }
}

// A float scratch buffer of n elements, kept between calls (peers run on one
// thread) so that its allocation is paid once, in the warm-up.
float* scratch(std::vector<float>& buffer, index_t n) {
  if (buffer.size() < std::size_t(n)) buffer.resize(std::size_t(n));
  return buffer.data();
}

// Two sgemm calls and the column sum. dweight accumulates (beta = 1); dinp
// too, or beta = 0 with overwrite_dinp. With GELU the product goes through
// a scratch buffer (or dinp itself when it is overwritten) and a pass
// multiplies it by gelu'. Zero sizes: nothing to multiply (BLAS would refuse
// their leading dimensions).
void openblas(const PeerArgs& a) {
  const int M = int(a.M), C = int(a.C), OC = int(a.OC);
  float* const dinp = static_cast<float*>(a.dinp);
  const float* const dout = static_cast<const float*>(a.dout);
  static std::vector<float> product_buffer;
  if (M > 0 && C > 0 && OC > 0) {
    // dinp (M×C) ⟵ dout (M×OC) · weight (OC×C)
    const bool direct = !a.pre_gelu;
    float* const product = direct || a.overwrite_dinp ? dinp : scratch(product_buffer, a.M * a.C);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, C, OC, 1.0f, dout, OC,
                static_cast<const float*>(a.weight), C,
                direct && !a.overwrite_dinp ? 1.0f : 0.0f, product, C);
    if (!direct) store_dinp<float>(a, product);  // in place when product is dinp: = p·g
    // dweight (OC×C) += doutᵀ (OC×M) · inp (M×C)
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, OC, C, M, 1.0f, dout, OC,
                static_cast<const float*>(a.inp), C, 1.0f, static_cast<float*>(a.dweight), C);
  } else if (a.overwrite_dinp) {
    std::fill(dinp, dinp + a.M * a.C, 0.0f);  // OC = 0: an empty sum
  }
  column_sum(a);
}

// OpenBLAS's bf16 GEMM (bf16 inputs, float products and results), looked up
// at run time: Debian's cblas.h declares it, but its libopenblas is built
// without BUILD_BFLOAT16 and lacks the symbol.
using Sbgemm = void (*)(CBLAS_ORDER, CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, blasint, blasint, blasint,
                        float, const std::uint16_t*, blasint, const std::uint16_t*, blasint, float,
                        float*, blasint);
Sbgemm find_sbgemm() {
  static const Sbgemm f = reinterpret_cast<Sbgemm>(dlsym(RTLD_DEFAULT, "cblas_sbgemm"));
  return f;
}

// bf16: two sbgemm calls into float, then dinp and (in "bf16") dweight
// rounded to bf16 once; in "bf16-fp32grad" dweight accumulates in place.
void openblas_sbgemm(const PeerArgs& a) {
  const int M = int(a.M), C = int(a.C), OC = int(a.OC);
  const auto* dout = static_cast<const std::uint16_t*>(a.dout);
  const bool fp32grad = a.precision == "bf16-fp32grad";
  static std::vector<float> dinp_buffer, dweight_buffer;
  if (M > 0 && C > 0 && OC > 0) {
    const Sbgemm sbgemm = find_sbgemm();
    float* const product = scratch(dinp_buffer, a.M * a.C);
    sbgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, C, OC, 1.0f, dout, OC,
           static_cast<const std::uint16_t*>(a.weight), C, 0.0f, product, C);
    store_dinp<bf16>(a, product);
    float* const dw = fp32grad ? static_cast<float*>(a.dweight) : scratch(dweight_buffer, a.OC * a.C);
    sbgemm(CblasRowMajor, CblasTrans, CblasNoTrans, OC, C, M, 1.0f, dout, OC,
           static_cast<const std::uint16_t*>(a.inp), C, fp32grad ? 1.0f : 0.0f, dw, C);
    if (!fp32grad) {
      bf16* const dweight = static_cast<bf16*>(a.dweight);
      const index_t n = a.OC * a.C;
#pragma omp parallel for num_threads(a.threads)
      for (index_t i = 0; i < n; ++i) dweight[i] = bf16(float(dweight[i]) + dw[i]);
    }
  } else if (a.overwrite_dinp) {
    std::fill(static_cast<bf16*>(a.dinp), static_cast<bf16*>(a.dinp) + a.M * a.C, bf16(0.0f));
  }
  column_sum_bf16(a);
}

}  // namespace

std::vector<Peer> host_peers() {
  const std::vector<std::string> host{"Serial", "OpenMP"};
  std::vector<Peer> peers(3);
  peers[0].name = "seed-cpu-loops";
  peers[0].backends = host;
  peers[0].precisions = {"fp32"};
  peers[0].run = seed_cpu_loops;
  peers[0].bias_kernel = "fused";  // dbias is summed in the dweight loop
  peers[0].description = "the seed's CPU loops (OpenMP)";
  peers[1].name = "openblas";
  peers[1].backends = host;
  peers[1].precisions = {"fp32"};
  peers[1].run = openblas;
  peers[1].bias_only = column_sum;
  peers[1].bias_kernel = "perf column_sum (OpenMP, double partials)";
  peers[1].int_sizes = true;
  peers[1].gelu = "separate";
  peers[1].comparison = true;
  peers[1].description = "2 × OpenBLAS sgemm + an OpenMP column sum (+ an OpenMP GELU' pass)";
  peers[2].name = "openblas-sbgemm";
  peers[2].backends = host;
  peers[2].precisions = {"bf16", "bf16-fp32grad"};
  peers[2].run = openblas_sbgemm;
  peers[2].bias_only = column_sum_bf16;
  peers[2].bias_kernel = "perf column_sum (OpenMP, double partials)";
  peers[2].int_sizes = true;
  peers[2].gelu = "separate";
  peers[2].comparison = true;
  if (!find_sbgemm())
    peers[2].unavailable = "this OpenBLAS has no cblas_sbgemm (built without BUILD_BFLOAT16)";
  peers[2].description =
      "2 × OpenBLAS sbgemm (bf16 in, float out) + OpenMP passes rounding to bf16 (GELU' "
      "included) + an OpenMP column sum";
  return peers;
}

}  // namespace llmk::perf::matmul_backward
