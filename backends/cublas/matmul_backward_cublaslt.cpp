// "cublaslt": the two products through cuBLASLt; the dweight product carries
// the BGRADB epilogue, so the bias gradient (column sums of dout) comes out of
// the GEMM that already reads all of dout, instead of a separate pass.
// BGRADB *writes* the bias vector, so it goes to a temporary that is then
// added to dbias (gradients accumulate). Layout mapping: see
// matmul_backward_cublas.cpp. Both GEMMs are described and their algorithms
// chosen before the first is launched: a failure leaves the outputs untouched.
#include "cublas_handles.hpp"

#include <backends/cublas/matmul_backward_cublas.hpp>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <tuple>
#include <utility>

namespace llmk::op::matmul_backward {
namespace {

using backends::check_cublas;

// One column-major GEMM  D (m×n) += op(A) · op(B), optionally with BGRADB.
struct LtGemm {
  cublasOperation_t trans_a, trans_b;
  index_t m, n, k, lda, ldb, ldd;
  bool bias_grad_b, tf32;
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

// A GEMM described and its algorithm chosen, ready to launch. Owns its
// descriptors, released even when a check throws.
class PreparedGemm {
 public:
  PreparedGemm(backends::CublasLtHandle& lt, const LtGemm& g, const float* A, const float* B,
               float* D, float* bias_grad)
      : lt_(lt), A_(A), B_(B), D_(D) {
    check_cublas(cublasLtMatmulDescCreate(
                     &op_, g.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUDA_R_32F),
                 "cublasLtMatmulDescCreate");
    set_attribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, g.trans_a);
    set_attribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, g.trans_b);
    if (g.bias_grad_b) {
      set_attribute(op_, CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_BGRADB);
      set_attribute(op_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<void*>(bias_grad));
    }
    // Stored (not transposed) shapes of A and B.
    const bool ta = g.trans_a != CUBLAS_OP_N, tb = g.trans_b != CUBLAS_OP_N;
    check_cublas(cublasLtMatrixLayoutCreate(&a_, CUDA_R_32F, ta ? g.k : g.m, ta ? g.m : g.k, g.lda),
                 "cublasLtMatrixLayoutCreate (A)");
    check_cublas(cublasLtMatrixLayoutCreate(&b_, CUDA_R_32F, tb ? g.n : g.k, tb ? g.k : g.n, g.ldb),
                 "cublasLtMatrixLayoutCreate (B)");
    check_cublas(cublasLtMatrixLayoutCreate(&d_, CUDA_R_32F, g.m, g.n, g.ldd),
                 "cublasLtMatrixLayoutCreate (D)");
    algo_ = choose_algo(g, alignment(A), alignment(B), alignment(D));
  }
  ~PreparedGemm() {
    if (op_) cublasLtMatmulDescDestroy(op_);
    if (a_) cublasLtMatrixLayoutDestroy(a_);
    if (b_) cublasLtMatrixLayoutDestroy(b_);
    if (d_) cublasLtMatrixLayoutDestroy(d_);
  }
  PreparedGemm(const PreparedGemm&) = delete;
  PreparedGemm& operator=(const PreparedGemm&) = delete;

  // D = op(A)·op(B) + beta·D
  void launch(const Kokkos::Cuda& exec, void* scratch, const float beta) const {
    const float one = 1.0f;
    check_cublas(cublasLtMatmul(lt_.get(), op_, &one, A_, a_, B_, b_, &beta, D_, d_, D_, d_, &algo_,
                                scratch, CublasLt::scratch_bytes, exec.cuda_stream()),
                 "cublasLtMatmul");
  }

 private:
  // The heuristic's choice, cached in the context's handle per shape and
  // alignment of A, B and D (= C).
  cublasLtMatmulAlgo_t choose_algo(const LtGemm& g, std::uint32_t align_a, std::uint32_t align_b,
                                   std::uint32_t align_d) {
    const auto key = std::make_tuple(int(g.trans_a), int(g.trans_b), (long long)g.m,
                                     (long long)g.n, (long long)g.k, (long long)g.lda,
                                     (long long)g.ldb, (long long)g.ldd, g.bias_grad_b, g.tf32,
                                     align_a, align_b, align_d);
    if (auto it = lt_.algos.find(key); it != lt_.algos.end()) return it->second;
    cublasLtMatmulPreference_t pref = nullptr;
    check_cublas(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
    const std::size_t max_ws = CublasLt::scratch_bytes;
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
    const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(lt_.get(), op_, a_, b_, d_, d_,
                                                                 pref, 1, &result, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    check_cublas(status, "cublasLtMatmulAlgoGetHeuristic");
    if (found == 0) {
      throw std::runtime_error(
          std::string("llmk: cuBLASLt offers no float32 algorithm for this GEMM") +
          (g.bias_grad_b ? " with the BGRADB epilogue" : ""));
    }
    lt_.algos.emplace(key, result.algo);
    return result.algo;
  }

  backends::CublasLtHandle& lt_;
  const float *A_, *B_;
  float* D_;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
};

// dbias += bias_grad (a free function: nvcc's extended lambdas fail inside
// static member functions of templates).
void add_bias_grad(const Kokkos::Cuda& exec, const Vector<Kokkos::Cuda>& dbias,
                   const float* bias_grad, const bool overwrite) {
  Kokkos::parallel_for(
      "llmk::cublaslt_add_bias_grad", Range<Kokkos::Cuda>(exec, 0, index_t(dbias.extent(0))),
      KOKKOS_LAMBDA(const index_t o) { kernels::update(dbias(o), bias_grad[o], overwrite); });
}

}  // namespace

template <>
void CublasLt::run<Kokkos::Cuda, Fp32>(Call<Kokkos::Cuda>& call,
                                       const Problem<Kokkos::Cuda, Fp32>& p) {
  auto& lt = call.ctx.template resource<backends::CublasLtHandle>();
  const bool tf32 = call.options.math == Math::tf32;
  const bool fused_bias = p.has_bias();
  void* const scratch = call.workspace.take<unsigned char>(scratch_bytes);
  const DinpOutput<Kokkos::Cuda> dinp_out(p.dinp, p.overwrite_dinp, p.has_gelu(), call.workspace);
  float* const bias_grad = fused_bias ? call.workspace.take<float>(std::size_t(p.OC)) : nullptr;
  // dinpᵀ (C×M) += weightᵀ (C×OC) · doutᵀ (OC×M)
  const PreparedGemm dinp(lt, {CUBLAS_OP_N, CUBLAS_OP_N, p.C, p.M, p.OC, p.C, p.OC, p.C, false, tf32},
                          p.weight.data(), p.dout.data(), dinp_out.target().data(), nullptr);
  // dweightᵀ (C×OC) += inpᵀ (C×M) · dout (M×OC); BGRADB: Σ_m dout(m, o), o < OC
  const PreparedGemm dweight(
      lt, {CUBLAS_OP_N, CUBLAS_OP_T, p.C, p.OC, p.M, p.C, p.OC, p.C, fused_bias, tf32},
      p.inp.data(), p.dout.data(), p.dweight.data(), bias_grad);
  dinp.launch(call.exec, scratch, dinp_out.beta());
  dinp_out.finish(call.exec, p.pre_gelu);
  dweight.launch(call.exec, scratch, p.overwrite_dweight ? 0.0f : 1.0f);
  if (fused_bias) add_bias_grad(call.exec, p.dbias, bias_grad, p.overwrite_dbias);
}

}  // namespace llmk::op::matmul_backward
