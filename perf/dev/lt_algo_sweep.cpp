// lt_algo_sweep: time every algorithm cuBLASLt's heuristic proposes for one bf16 GEMM.
//
// Build (standalone; no Kokkos):
//   nvcc -O2 -std=c++17 -arch=sm_90 perf/dev/lt_algo_sweep.cpp -lcublasLt -lcublas -o
//   /tmp/lt_algo_sweep
//
// GEMM, cuBLAS column-major convention:  D(m x n) = alpha * op(A) * op(B) + beta * D
//   A/B/D bf16, CUBLAS_COMPUTE_32F, scale type float, alpha = 1, C aliases D (in place).
//   A is stored as (transa=T ? k x m : m x k), B as (transb=T ? n x k : k x n), D as m x n.
//
// Usage (key=value pairs, any order; all but m, n, k optional):
//   lt_algo_sweep m=M n=N k=K [transa=N|T] [transb=N|T] [lda=..] [ldb=..] [ldd=..]
//                 [beta=0|1] [epilogue=none|dgelu|bgradb] [label=STRING]
//   Defaults: transa=N transb=N beta=0 epilogue=none label=""; lda/ldb/ldd default to the
//   tight leading dimension of the stored shape (lda = transa=T ? k : m, ldb = transb=T ? n : k,
//   ldd = m).
//   epilogue=dgelu : CUBLASLT_EPILOGUE_DGELU, reads a bf16 aux (GELU input) of D's shape, ld = ldd.
//   epilogue=bgradb: CUBLASLT_EPILOGUE_BGRADB, writes a float bias gradient of n elements.
//
// Per algorithm (heuristic order, up to 32, 32 MiB workspace): 3 warm-up launches, then 50 timed
// launches, each alone between two CUDA events, each preceded by a 256 MiB cudaMemsetAsync that
// flushes L2 (H200 L2 is 50 MiB). Reports median ms and TFLOP/s = 2*m*n*k / median.
//
// Example invocations (GPT-2 124M, B*T = 8192; see lt_algo_sweep.sh):
//   1. fcproj dinp with DGELU:
//      lt_algo_sweep m=3072 n=8192 k=768 transa=N transb=N epilogue=dgelu label=fcproj_dinp_dgelu
//        (lda=3072, ldb=768, ldd=3072 are the defaults)
//   2. the same without epilogue:
//      lt_algo_sweep m=3072 n=8192 k=768 transa=N transb=N label=fcproj_dinp
//   3. attproj dweight:
//      lt_algo_sweep m=768 n=768 k=8192 transa=N transb=T beta=1 label=attproj_dweight
//        (lda=768, ldb=768, ldd=768 are the defaults)
//   4. fc dweight:
//      lt_algo_sweep m=768 n=3072 k=8192 transa=N transb=T beta=1 label=fc_dweight
//   5. qkv dweight:
//      lt_algo_sweep m=768 n=2304 k=8192 transa=N transb=T beta=1 label=qkv_dweight

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CUDA_CHECK(call)                                                                         \
  do {                                                                                           \
    cudaError_t e_ = (call);                                                                     \
    if (e_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "CUDA error %s (%d) at %s:%d: %s\n", cudaGetErrorString(e_), (int)e_, \
                   __FILE__, __LINE__, #call);                                                   \
      std::exit(1);                                                                              \
    }                                                                                            \
  } while (0)

#define LT_CHECK(call)                                                                      \
  do {                                                                                      \
    cublasStatus_t s_ = (call);                                                             \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                      \
      std::fprintf(stderr, "cuBLASLt error %d at %s:%d: %s\n", (int)s_, __FILE__, __LINE__, \
                   #call);                                                                  \
      std::exit(1);                                                                         \
    }                                                                                       \
  } while (0)

// bf16 <-> float on the host, by bit manipulation (round to nearest even), so this .cpp needs
// no device code and no cuda_bf16.h host-side conversions.
static uint16_t f2bf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}
static float bf2f(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Random bf16 in [-1, 1], deterministic LCG, filled on the host then copied.
static void fill_random_bf16(void* dptr, size_t count, uint64_t seed) {
  std::vector<uint16_t> h(count);
  uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (size_t i = 0; i < count; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    float r = (float)((s >> 40) & 0xFFFFFF) / (float)0xFFFFFF;  // [0, 1]
    h[i] = f2bf(2.0f * r - 1.0f);
  }
  CUDA_CHECK(cudaMemcpy(dptr, h.data(), count * 2, cudaMemcpyHostToDevice));
}

static void usage_exit(const char* prog) {
  std::fprintf(stderr,
               "usage: %s m=M n=N k=K [transa=N|T] [transb=N|T] [lda=..] [ldb=..] [ldd=..]\n"
               "          [beta=0|1] [epilogue=none|dgelu|bgradb] [label=STRING]\n",
               prog);
  std::exit(2);
}

// Reads one algo-config attribute; returns -1 if this cuBLASLt doesn't know it.
template <typename T>
static long long algo_attr(const cublasLtMatmulAlgo_t& algo,
                           cublasLtMatmulAlgoConfigAttributes_t a) {
  T v{};
  size_t written = 0;
  if (cublasLtMatmulAlgoConfigGetAttribute(&algo, a, &v, sizeof(v), &written) !=
      CUBLAS_STATUS_SUCCESS)
    return -1;
  return (long long)v;
}

int main(int argc, char** argv) {
  long long m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldd = 0;
  char ta = 'N', tb = 'N';
  float beta = 0.0f;
  std::string epi = "none", label;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    size_t eq = a.find('=');
    if (eq == std::string::npos) usage_exit(argv[0]);
    std::string key = a.substr(0, eq), val = a.substr(eq + 1);
    if (key == "m")
      m = std::atoll(val.c_str());
    else if (key == "n")
      n = std::atoll(val.c_str());
    else if (key == "k")
      k = std::atoll(val.c_str());
    else if (key == "lda")
      lda = std::atoll(val.c_str());
    else if (key == "ldb")
      ldb = std::atoll(val.c_str());
    else if (key == "ldd")
      ldd = std::atoll(val.c_str());
    else if (key == "transa")
      ta = (char)std::toupper(val.empty() ? 'N' : val[0]);
    else if (key == "transb")
      tb = (char)std::toupper(val.empty() ? 'N' : val[0]);
    else if (key == "beta")
      beta = (float)std::atof(val.c_str());
    else if (key == "epilogue")
      epi = val;
    else if (key == "label")
      label = val;
    else
      usage_exit(argv[0]);
  }
  if (m <= 0 || n <= 0 || k <= 0 || (ta != 'N' && ta != 'T') || (tb != 'N' && tb != 'T') ||
      (epi != "none" && epi != "dgelu" && epi != "bgradb"))
    usage_exit(argv[0]);
  const bool tA = ta == 'T', tB = tb == 'T';
  // Stored (column-major) shapes: A is arows x acols, B is brows x bcols.
  const long long arows = tA ? k : m, acols = tA ? m : k;
  const long long brows = tB ? n : k, bcols = tB ? k : n;
  if (lda == 0) lda = arows;
  if (ldb == 0) ldb = brows;
  if (ldd == 0) ldd = m;
  if (lda < arows || ldb < brows || ldd < m) {
    std::fprintf(stderr, "leading dimension smaller than the stored rows\n");
    return 2;
  }
  const float alpha = 1.0f;

  std::printf(
      "== %s: m=%lld n=%lld k=%lld transa=%c transb=%c lda=%lld ldb=%lld ldd=%lld "
      "beta=%g epilogue=%s\n",
      label.empty() ? "(no label)" : label.c_str(), m, n, k, ta, tb, lda, ldb, ldd, beta,
      epi.c_str());

  // --- buffers (cudaMalloc gives >= 256-byte alignment) ---
  const size_t a_elems = (size_t)lda * acols, b_elems = (size_t)ldb * bcols,
               d_elems = (size_t)ldd * n;
  const size_t ws_bytes = 32ull << 20, flush_bytes = 256ull << 20;
  void *dA, *dB, *dD, *dAux = nullptr, *dWs, *dFlush;
  float* dBias = nullptr;
  CUDA_CHECK(cudaMalloc(&dA, a_elems * 2));
  CUDA_CHECK(cudaMalloc(&dB, b_elems * 2));
  CUDA_CHECK(cudaMalloc(&dD, d_elems * 2));
  CUDA_CHECK(cudaMalloc(&dWs, ws_bytes));
  CUDA_CHECK(cudaMalloc(&dFlush, flush_bytes));
  fill_random_bf16(dA, a_elems, 1);
  fill_random_bf16(dB, b_elems, 2);
  CUDA_CHECK(cudaMemset(dD, 0, d_elems * 2));
  if (epi == "dgelu") {
    CUDA_CHECK(cudaMalloc(&dAux, d_elems * 2));
    fill_random_bf16(dAux, d_elems, 3);
  }
  if (epi == "bgradb") {
    CUDA_CHECK(cudaMalloc(&dBias, n * sizeof(float)));
    CUDA_CHECK(cudaMemset(dBias, 0, n * sizeof(float)));
  }

  // --- descriptors ---
  cublasLtHandle_t lt;
  LT_CHECK(cublasLtCreate(&lt));
  cublasLtMatmulDesc_t op;
  LT_CHECK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasOperation_t opA = tA ? CUBLAS_OP_T : CUBLAS_OP_N, opB = tB ? CUBLAS_OP_T : CUBLAS_OP_N;
  LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &opA, sizeof(opA)));
  LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &opB, sizeof(opB)));
  if (epi == "dgelu") {
    cublasLtEpilogue_t e = CUBLASLT_EPILOGUE_DGELU;
    int64_t aux_ld = ldd;
    LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof(e)));
    LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &dAux,
                                            sizeof(dAux)));
    LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &aux_ld,
                                            sizeof(aux_ld)));
  } else if (epi == "bgradb") {
    cublasLtEpilogue_t e = CUBLASLT_EPILOGUE_BGRADB;
    cudaDataType_t bt = CUDA_R_32F;
    LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof(e)));
    LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &dBias,
                                            sizeof(dBias)));
    LT_CHECK(
        cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof(bt)));
  }
  cublasLtMatrixLayout_t la, lb, ld;
  LT_CHECK(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, arows, acols, lda));
  LT_CHECK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, brows, bcols, ldb));
  LT_CHECK(cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, m, n, ldd));

  cublasLtMatmulPreference_t pref;
  LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  uint64_t ws_pref = ws_bytes;
  LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                &ws_pref, sizeof(ws_pref)));
  // As llmk's wrapper asks (backends/cublas/gemm_lt.cpp): D is bf16, so no
  // split-K that adds its partial sums in the output type.
  const uint32_t schemes = CUBLASLT_REDUCTION_SCHEME_NONE | CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
  LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                                                &schemes, sizeof(schemes)));
  const int max_algos = 32;
  std::vector<cublasLtMatmulHeuristicResult_t> heur(max_algos);
  int nalgo = 0;
  LT_CHECK(
      cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, ld, ld, pref, max_algos, heur.data(), &nalgo));
  std::printf("heuristic returned %d algorithm(s)\n", nalgo);
  if (nalgo == 0) return 1;

  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  cudaEvent_t ev0, ev1;
  CUDA_CHECK(cudaEventCreate(&ev0));
  CUDA_CHECK(cudaEventCreate(&ev1));

  // C aliases D (same pointer and layout): in-place beta accumulation, as in training code.
  auto launch = [&](const cublasLtMatmulAlgo_t* algo) {
    return cublasLtMatmul(lt, op, &alpha, dA, la, dB, lb, &beta, dD, ld, dD, ld, algo, dWs,
                          ws_bytes, stream);
  };

  const int warmup = 3, iters = 50;
  const double flops = 2.0 * (double)m * (double)n * (double)k;
  std::vector<double> med_ms(nalgo, -1.0);
  std::printf("%4s %10s %9s  %s\n", "idx", "median_ms", "TFLOP/s", "algo");
  for (int i = 0; i < nalgo; ++i) {
    const cublasLtMatmulAlgo_t& algo = heur[i].algo;
    char desc[256];
    std::snprintf(desc, sizeof(desc),
                  "id=%lld tile=%lld stages=%lld splitk=%lld red=%lld swizzle=%lld cluster=%lld "
                  "waves=%.3f ws=%zu",
                  algo_attr<int32_t>(algo, CUBLASLT_ALGO_CONFIG_ID),
                  algo_attr<uint32_t>(algo, CUBLASLT_ALGO_CONFIG_TILE_ID),
                  algo_attr<uint32_t>(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID),
                  algo_attr<int32_t>(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM),
                  algo_attr<uint32_t>(algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME),
                  algo_attr<uint32_t>(algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING),
                  // CLUSTER_SHAPE_ID exists in CUDA >= 12; algo_attr returns -1 if unsupported.
                  algo_attr<uint16_t>(algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID),
                  heur[i].wavesCount, heur[i].workspaceSize);
    const char* mark = i == 0 ? "  <- heuristic #0" : "";
    if (heur[i].state != CUBLAS_STATUS_SUCCESS) {
      std::printf("%4d failed (status %d)  %s%s\n", i, (int)heur[i].state, desc, mark);
      continue;
    }
    cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
    for (int w = 0; w < warmup && st == CUBLAS_STATUS_SUCCESS; ++w) st = launch(&algo);
    std::vector<float> t(iters);
    for (int it = 0; it < iters && st == CUBLAS_STATUS_SUCCESS; ++it) {
      // The flush sits outside the events, so only the GEMM is timed, starting from cold L2.
      CUDA_CHECK(cudaMemsetAsync(dFlush, it & 0xFF, flush_bytes, stream));
      CUDA_CHECK(cudaEventRecord(ev0, stream));
      st = launch(&algo);
      CUDA_CHECK(cudaEventRecord(ev1, stream));
      CUDA_CHECK(cudaEventSynchronize(ev1));
      CUDA_CHECK(cudaEventElapsedTime(&t[it], ev0, ev1));
    }
    if (st != CUBLAS_STATUS_SUCCESS) {
      CUDA_CHECK(cudaStreamSynchronize(stream));
      std::printf("%4d failed (status %d)  %s%s\n", i, (int)st, desc, mark);
      continue;
    }
    std::sort(t.begin(), t.end());
    med_ms[i] = 0.5 * ((double)t[iters / 2 - 1] + (double)t[iters / 2]);
    std::printf("%4d %10.4f %9.1f  %s%s\n", i, med_ms[i], flops / (med_ms[i] * 1e-3) / 1e12, desc,
                mark);
  }

  int best = -1;
  for (int i = 0; i < nalgo; ++i)
    if (med_ms[i] > 0 && (best < 0 || med_ms[i] < med_ms[best])) best = i;
  if (best < 0) {
    std::printf("all algorithms failed\n");
    return 1;
  }
  if (med_ms[0] > 0)
    std::printf("fastest: #%d %.4f ms %.1f TFLOP/s; #0 %.4f ms; #0/fastest time ratio = %.3f\n",
                best, med_ms[best], flops / (med_ms[best] * 1e-3) / 1e12, med_ms[0],
                med_ms[0] / med_ms[best]);
  else
    std::printf("fastest: #%d %.4f ms %.1f TFLOP/s; #0 failed\n", best, med_ms[best],
                flops / (med_ms[best] * 1e-3) / 1e12);

  // Sanity: one launch each of #0 and the fastest from D = 0 (so beta doesn't accumulate
  // the timing runs), then compare D (and the bias gradient for bgradb).
  if (med_ms[0] > 0 && best != 0) {
    auto run_once = [&](int i, std::vector<uint16_t>& hD, std::vector<float>& hBias) {
      CUDA_CHECK(cudaMemsetAsync(dD, 0, d_elems * 2, stream));
      LT_CHECK(launch(&heur[i].algo));
      CUDA_CHECK(cudaStreamSynchronize(stream));
      hD.resize(d_elems);
      CUDA_CHECK(cudaMemcpy(hD.data(), dD, d_elems * 2, cudaMemcpyDeviceToHost));
      if (dBias) {
        hBias.resize(n);
        CUDA_CHECK(cudaMemcpy(hBias.data(), dBias, n * sizeof(float), cudaMemcpyDeviceToHost));
      }
    };
    std::vector<uint16_t> d0, d1;
    std::vector<float> b0, b1;
    run_once(0, d0, b0);
    run_once(best, d1, b1);
    double maxdiff = 0, maxabs = 0;
    for (long long j = 0; j < n; ++j)
      for (long long r = 0; r < m; ++r) {  // only the m valid rows of each ldd-strided column
        size_t idx = (size_t)j * ldd + r;
        double a0 = bf2f(d0[idx]), a1 = bf2f(d1[idx]);
        maxdiff = std::max(maxdiff, std::fabs(a0 - a1));
        maxabs = std::max(maxabs, std::fabs(a0));
      }
    std::printf("sanity: max |D(#0) - D(#%d)| = %.6g (max |D(#0)| = %.6g)\n", best, maxdiff,
                maxabs);
    if (dBias) {
      double bd = 0;
      for (long long j = 0; j < n; ++j) bd = std::max(bd, (double)std::fabs(b0[j] - b1[j]));
      std::printf("sanity: max |bgrad(#0) - bgrad(#%d)| = %.6g\n", best, bd);
    }
  } else if (best == 0) {
    std::printf("sanity: fastest is #0, nothing to compare\n");
  }

  CUDA_CHECK(cudaEventDestroy(ev0));
  CUDA_CHECK(cudaEventDestroy(ev1));
  CUDA_CHECK(cudaStreamDestroy(stream));
  LT_CHECK(cublasLtMatmulPreferenceDestroy(pref));
  LT_CHECK(cublasLtMatrixLayoutDestroy(la));
  LT_CHECK(cublasLtMatrixLayoutDestroy(lb));
  LT_CHECK(cublasLtMatrixLayoutDestroy(ld));
  LT_CHECK(cublasLtMatmulDescDestroy(op));
  LT_CHECK(cublasLtDestroy(lt));
  for (void* p : {dA, dB, dD, dWs, dFlush, dAux, (void*)dBias})
    if (p) CUDA_CHECK(cudaFree(p));
  return 0;
}
