// "cublaslt": the two products through cuBLASLt; the dweight product carries
// the BGRADB epilogue, so the bias gradient (column sums of dout) comes out of
// the GEMM that already reads all of dout, instead of a separate pass.
// BGRADB *writes* the bias vector, so it goes to a temporary that is then
// added to dbias (gradients accumulate). Layout mapping: see cublas_impl.cpp.
#include "cublas_handles.hpp"
#include "cublas_impl.hpp"

#include <llmk/detail/workspace.hpp>

#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <tuple>
#include <utility>

namespace llmk::detail {
namespace {

constexpr std::size_t workspace_bytes = 32u << 20;  // cuBLASLt's scratch (Hopper kernels want some)
enum WorkspaceSlot { lt_scratch_slot = 1, bias_grad_slot = 2 };

// One column-major GEMM  D (m×n) += op(A) · op(B), optionally with BGRADB.
struct LtGemm {
  cublasOperation_t trans_a, trans_b;
  index_t m, n, k, lda, ldb, ldd;
  bool bias_grad_b, tf32;

  auto key() const {
    return std::make_tuple(int(trans_a), int(trans_b), m, n, k, lda, ldb, ldd, bias_grad_b, tf32);
  }
};

// Owns the descriptors of one call, released even when a check throws.
struct LtDescriptors {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  ~LtDescriptors() {
    if (op) cublasLtMatmulDescDestroy(op);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (d) cublasLtMatrixLayoutDestroy(d);
  }
};

template <class T>
void set_attribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, const T& value) {
  check_cublas(cublasLtMatmulDescSetAttribute(desc, attr, &value, sizeof(value)),
               "cublasLtMatmulDescSetAttribute");
}

// The largest power of two, up to 256, that divides the address. cuBLASLt's
// heuristic assumes 256-byte aligned matrices unless told otherwise, and the
// algorithm it then picks fails with CUBLAS_STATUS_INVALID_VALUE on less: on
// any Kokkos allocation (its data follows a 128-byte header) or slice of one.
std::uint32_t alignment(const void* ptr) {
  const auto address = reinterpret_cast<std::uintptr_t>(ptr);
  std::uint32_t align = 256;
  while (align > 4 && address % align != 0) align /= 2;
  return align;
}

// The heuristic's choice is cached per shape and alignment of A, B and D (= C):
// asking costs more than a small GEMM.
cublasLtMatmulAlgo_t choose_algo(const LtGemm& g, const LtDescriptors& desc,
                                 std::uint32_t align_a, std::uint32_t align_b,
                                 std::uint32_t align_d) {
  const auto key = std::tuple_cat(g.key(), std::make_tuple(align_a, align_b, align_d));
  static std::mutex mutex;
  static std::map<decltype(key), cublasLtMatmulAlgo_t> cache;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = cache.find(key); it != cache.end()) return it->second;

  cublasLtMatmulPreference_t pref = nullptr;
  check_cublas(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
  const std::size_t max_ws = workspace_bytes;
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_ws,
                                       sizeof(max_ws));
  const std::pair<cublasLtMatmulPreferenceAttributes_t, std::uint32_t> aligns[] = {
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, align_a},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, align_b},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, align_d},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, align_d}};
  for (const auto& [attribute, align] : aligns)
    cublasLtMatmulPreferenceSetAttribute(pref, attribute, &align, sizeof(align));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(
      cublaslt_handle(), desc.op, desc.a, desc.b, desc.d, desc.d, pref, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  check_cublas(status, "cublasLtMatmulAlgoGetHeuristic");
  if (found == 0) {
    throw std::runtime_error(
        std::string("llmk: cuBLASLt offers no float32 algorithm for this GEMM") +
        (g.bias_grad_b ? " with the BGRADB epilogue" : ""));
  }
  cache.emplace(key, result.algo);
  return result.algo;
}

void lt_gemm(const Kokkos::Cuda& exec, const LtGemm& g, const float* A, const float* B, float* D,
             float* bias_grad) {
  LtDescriptors desc;
  check_cublas(cublasLtMatmulDescCreate(&desc.op,
                                        g.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
                                        CUDA_R_32F),
               "cublasLtMatmulDescCreate");
  set_attribute(desc.op, CUBLASLT_MATMUL_DESC_TRANSA, g.trans_a);
  set_attribute(desc.op, CUBLASLT_MATMUL_DESC_TRANSB, g.trans_b);
  if (g.bias_grad_b) {
    set_attribute(desc.op, CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_BGRADB);
    set_attribute(desc.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<void*>(bias_grad));
  }
  // Stored (not transposed) shapes of A and B.
  const bool ta = g.trans_a != CUBLAS_OP_N, tb = g.trans_b != CUBLAS_OP_N;
  check_cublas(cublasLtMatrixLayoutCreate(&desc.a, CUDA_R_32F, ta ? g.k : g.m, ta ? g.m : g.k, g.lda),
               "cublasLtMatrixLayoutCreate (A)");
  check_cublas(cublasLtMatrixLayoutCreate(&desc.b, CUDA_R_32F, tb ? g.n : g.k, tb ? g.k : g.n, g.ldb),
               "cublasLtMatrixLayoutCreate (B)");
  check_cublas(cublasLtMatrixLayoutCreate(&desc.d, CUDA_R_32F, g.m, g.n, g.ldd),
               "cublasLtMatrixLayoutCreate (D)");

  const cublasLtMatmulAlgo_t algo = choose_algo(g, desc, alignment(A), alignment(B), alignment(D));
  // The scratch too is given 256-byte aligned (its allocation is 128-byte aligned).
  constexpr std::size_t align = 256;
  const auto scratch =
      Workspace<Kokkos::Cuda, lt_scratch_slot>::get((workspace_bytes + align) / sizeof(float));
  const auto scratch_address = reinterpret_cast<std::uintptr_t>(scratch.data());
  void* const scratch_aligned = reinterpret_cast<void*>((scratch_address + align - 1) / align * align);
  const float one = 1.0f;  // alpha = beta = 1: D += op(A)·op(B)
  check_cublas(cublasLtMatmul(cublaslt_handle(), desc.op, &one, A, desc.a, B, desc.b, &one, D,
                              desc.d, D, desc.d, &algo, scratch_aligned, workspace_bytes,
                              exec.cuda_stream()),
               "cublasLtMatmul");
}

}  // namespace

void Implementation<Kokkos::Cuda, Impl::CublasLt>::run(const Kokkos::Cuda& exec,
                                                         const Problem<Kokkos::Cuda>& p,
                                                         const MatmulBackwardOptions& options) {
  const bool tf32 = options.allow_tf32;
  // dinpᵀ (C×M) += weightᵀ (C×OC) · doutᵀ (OC×M)
  lt_gemm(exec, {CUBLAS_OP_N, CUBLAS_OP_N, p.C, p.M, p.OC, p.C, p.OC, p.C, false, tf32},
          p.weight.data(), p.dout.data(), p.dinp.data(), nullptr);
  // dweightᵀ (C×OC) += inpᵀ (C×M) · dout (M×OC); BGRADB: Σ_m dout(m, o), o < OC
  const bool fused_bias = p.has_bias();
  Vector<Kokkos::Cuda> bias_grad;
  if (fused_bias) bias_grad = Workspace<Kokkos::Cuda, bias_grad_slot>::get(p.OC);
  lt_gemm(exec, {CUBLAS_OP_N, CUBLAS_OP_T, p.C, p.OC, p.M, p.C, p.OC, p.C, fused_bias, tf32},
          p.inp.data(), p.dout.data(), p.dweight.data(), fused_bias ? bias_grad.data() : nullptr);
  if (fused_bias) {
    const auto dbias = p.dbias;
    Kokkos::parallel_for(
        "llmk::cublaslt_add_bias_grad", Range<Kokkos::Cuda>(exec, 0, p.OC),
        KOKKOS_LAMBDA(const index_t o) { dbias(o) += bias_grad(o); });
  }
}

}  // namespace llmk::detail
