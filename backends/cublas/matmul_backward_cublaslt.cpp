// "cublaslt": the two products through cuBLASLt (inputs float or bf16, float
// scale and accumulation, outputs of the gradient's own type), with epilogues
// where cuBLASLt runs them:
//  - BGRADB on the dweight GEMM: Σ_rows dout comes out of the GEMM that
//    already reads all of dout. It *writes* the bias vector, so it goes to a
//    workspace vector that is then added to (or written into) dbias: a float
//    vector where cuBLASLt takes one (float dweight), a bf16 one for a bf16
//    dweight and an overwritten dbias (dweight_epilogues says why). Refused,
//    or a bf16 dbias accumulated: column_sums on the context's second stream,
//    beside the GEMMs (as "cublas").
//  - DGELU on the dinp GEMM: D = gelu'(aux) ⊙ (A·B + beta·C), in float, one
//    rounding. Only for an overwritten dinp (beta = 0): with +=, gelu' would
//    scale dinp's old value too. aux = pre_gelu, whose type is the inputs'
//    type and dinp's (the default aux type is D's); its leading dimension C
//    must be a multiple of 8 (CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD). Refused,
//    or C not a multiple of 8, or dinp accumulated: cublas_dinp_route's
//    separate passes (one rounding of a bf16 dinp).
// Both GEMMs are described, and their algorithms chosen and checked
// (cublasLtMatmulAlgoCheck), before the first is launched: a refusal turns
// into a separate pass, an error into an exception, with the outputs
// untouched. Layouts: cublas_common.hpp.
#include "cublas_common.hpp"

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace llmk::op::matmul_backward {
namespace {

using backends::check_cublas;
using backends::cuda_type;

// One column-major GEMM  D (m×n) = op(A) · op(B) + beta·D, alpha = 1.
struct LtGemm {
  const char* what;  // names the GEMM in errors
  cublasOperation_t trans_a, trans_b;
  index_t m, n, k, lda, ldb, ldd;
  cudaDataType_t in_type, d_type;  // A and B; C and D
  bool tf32;
  const void *A, *B;
  void* D;
};

// An epilogue a GEMM asks for, and its extra operands.
struct LtEpilogue {
  cublasLtEpilogue_t kind = CUBLASLT_EPILOGUE_DEFAULT;
  void* bias_grad = nullptr;          // BGRADB: n elements of bias_type
  cudaDataType_t bias_type = CUDA_R_32F;
  const void* aux = nullptr;          // DGELU: pre_gelu, D's type and shape
  index_t aux_ld = 0;
};

// The epilogues a GEMM would take, best first; when cuBLASLt refuses them
// all, the GEMM runs without one.
struct LtEpilogues {
  LtEpilogue choices[2];
  int count = 0;
  void add(const LtEpilogue& e) { choices[count++] = e; }
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
  if (ptr == nullptr) return 0;
  const auto address = reinterpret_cast<std::uintptr_t>(ptr);
  std::uint32_t align = 256;
  while (align > 2 && address % align != 0) align /= 2;
  return align;
}

// A GEMM described and its algorithm chosen, ready to launch: with the
// epilogue asked for if cuBLASLt runs it, else without (epilogue() says
// which). Owns its descriptors, released even when a check throws.
class PreparedGemm {
 public:
  PreparedGemm(backends::CublasLtHandle& lt, const LtGemm& g, const LtEpilogues& wanted)
      : lt_(lt), g_(g) {
    make_layouts();
    for (int i = 0; i < wanted.count; ++i) {
      try {
        if (prepare(wanted.choices[i])) return;
      } catch (const std::runtime_error&) {
        // An epilogue attribute this cuBLASLt rejects: a refusal too.
      }
    }
    prepare(LtEpilogue{});  // throws when there is no algorithm
  }
  ~PreparedGemm() {
    release_desc();
    if (a_) cublasLtMatrixLayoutDestroy(a_);
    if (b_) cublasLtMatrixLayoutDestroy(b_);
    if (d_) cublasLtMatrixLayoutDestroy(d_);
  }
  PreparedGemm(const PreparedGemm&) = delete;
  PreparedGemm& operator=(const PreparedGemm&) = delete;

  // The epilogue it runs (kind DEFAULT: none).
  const LtEpilogue& epilogue() const { return epilogue_; }

  // D = op(A)·op(B) + beta·D, and the epilogue
  void launch(const Kokkos::Cuda& exec, void* scratch, const float beta) const {
    const float one = 1.0f;
    check_cublas(cublasLtMatmul(lt_.get(), op_, &one, g_.A, a_, g_.B, b_, &beta, g_.D, d_, g_.D,
                                d_, &algo_, scratch, CublasLt::scratch_bytes, exec.cuda_stream()),
                 g_.what);
  }

 private:
  // Stored (not transposed) shapes of A and B.
  void make_layouts() {
    const bool ta = g_.trans_a != CUBLAS_OP_N, tb = g_.trans_b != CUBLAS_OP_N;
    check_cublas(cublasLtMatrixLayoutCreate(&a_, g_.in_type, ta ? g_.k : g_.m, ta ? g_.m : g_.k,
                                            g_.lda),
                 "cublasLtMatrixLayoutCreate (A)");
    check_cublas(cublasLtMatrixLayoutCreate(&b_, g_.in_type, tb ? g_.n : g_.k, tb ? g_.k : g_.n,
                                            g_.ldb),
                 "cublasLtMatrixLayoutCreate (B)");
    check_cublas(cublasLtMatrixLayoutCreate(&d_, g_.d_type, g_.m, g_.n, g_.ldd),
                 "cublasLtMatrixLayoutCreate (D)");
  }

  void make_desc(const LtEpilogue& e) {
    release_desc();
    check_cublas(cublasLtMatmulDescCreate(
                     &op_, g_.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUDA_R_32F),
                 "cublasLtMatmulDescCreate");
    set_attribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, g_.trans_a);
    set_attribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, g_.trans_b);
    if (e.kind == CUBLASLT_EPILOGUE_DEFAULT) return;
    set_attribute(op_, CUBLASLT_MATMUL_DESC_EPILOGUE, e.kind);
    if (e.kind == CUBLASLT_EPILOGUE_BGRADB) {
      set_attribute(op_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, e.bias_grad);
      // The default bias type is D's.
      if (e.bias_type != g_.d_type)
        set_attribute(op_, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, std::int32_t(e.bias_type));
    } else if (e.kind == CUBLASLT_EPILOGUE_DGELU) {
      set_attribute(op_, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, e.aux);
      set_attribute(op_, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, std::int64_t(e.aux_ld));
    }
  }

  void release_desc() {
    if (op_) cublasLtMatmulDescDestroy(op_);
    op_ = nullptr;
  }

  // Describes the GEMM with epilogue e and takes the algorithm cuBLASLt
  // chooses for it (cached in the context's handle, refusals included).
  // false: cuBLASLt runs no algorithm for it.
  bool prepare(const LtEpilogue& e) {
    make_desc(e);
    const backends::LtGemmKey key{int(g_.trans_a), int(g_.trans_b), g_.m, g_.n, g_.k, g_.lda,
                                  g_.ldb, g_.ldd, int(g_.tf32), int(g_.in_type), int(g_.in_type),
                                  int(g_.d_type), unsigned(e.kind), bias_type_key(e),
                                  alignment(g_.A), alignment(g_.B), alignment(g_.D),
                                  alignment(e.aux)};
    auto it = lt_.algos.find(key);
    if (it == lt_.algos.end()) it = lt_.algos.emplace(key, ask(e, key)).first;
    if (!it->second) return false;
    algo_ = *it->second;
    epilogue_ = e;
    return true;
  }

  static int bias_type_key(const LtEpilogue& e) {
    return e.kind == CUBLASLT_EPILOGUE_BGRADB ? int(e.bias_type) : -1;
  }

  // The heuristic's first choice, checked (cublasLtMatmulAlgoCheck fails for
  // combinations that would fail at launch). An epilogue the heuristic or
  // the check refuses is a refusal; without an epilogue, an error.
  std::optional<cublasLtMatmulAlgo_t> ask(const LtEpilogue& e, const backends::LtGemmKey& key) {
    cublasLtMatmulHeuristicResult_t result{};
    const char* step = "cublasLtMatmulAlgoGetHeuristic";
    cublasStatus_t status = heuristic(key, result);
    if (status == CUBLAS_STATUS_SUCCESS) {
      step = "cublasLtMatmulAlgoCheck";
      status = check(result.algo);
    }
    if (status == CUBLAS_STATUS_SUCCESS) return result.algo;
    if (e.kind != CUBLASLT_EPILOGUE_DEFAULT) return std::nullopt;  // the separate pass
    check_cublas(status, (std::string(step) + " (" + g_.what + ")").c_str());
    return std::nullopt;  // not reached
  }

  // NOT_SUPPORTED when it finds nothing.
  cublasStatus_t heuristic(const backends::LtGemmKey& key,
                           cublasLtMatmulHeuristicResult_t& result) {
    cublasLtMatmulPreference_t pref = nullptr;
    check_cublas(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
    const std::size_t max_scratch = CublasLt::scratch_bytes;
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                         &max_scratch, sizeof(max_scratch));
    const std::pair<cublasLtMatmulPreferenceAttributes_t, std::uint32_t> aligns[] = {
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, key.align_a},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, key.align_b},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, key.align_d},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, key.align_d}};
    for (const auto& [attribute, align] : aligns)
      cublasLtMatmulPreferenceSetAttribute(pref, attribute, &align, sizeof(align));
    // A bf16 output: no split-K algorithm that adds its partial sums in the
    // output type (INPLACE, OUTPUT_TYPE): the sums stay float. Left to the
    // heuristic, cuBLASLt did that on the H200 for
    // a small output of long sums (the tests' longOC: dinp 5 × 3, 2050 terms
    // each; 6 of 15 elements one bf16 ulp from the nearest); cublasGemmEx
    // has no such control.
    if (key.d_type != int(CUDA_R_32F)) {
      const std::uint32_t schemes = CUBLASLT_REDUCTION_SCHEME_NONE | CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
      cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                                           &schemes, sizeof(schemes));
    }
    int found = 0;
    const cublasStatus_t status =
        cublasLtMatmulAlgoGetHeuristic(lt_.get(), op_, a_, b_, d_, d_, pref, 1, &result, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    if (status != CUBLAS_STATUS_SUCCESS) return status;
    return found > 0 ? result.state : CUBLAS_STATUS_NOT_SUPPORTED;
  }

  // NOT_SUPPORTED when the algorithm needs more scratch than the call has.
  cublasStatus_t check(const cublasLtMatmulAlgo_t& algo) {
    cublasLtMatmulHeuristicResult_t checked{};
    const cublasStatus_t status =
        cublasLtMatmulAlgoCheck(lt_.get(), op_, a_, b_, d_, d_, &algo, &checked);
    if (status != CUBLAS_STATUS_SUCCESS) return status;
    return checked.workspaceSize <= CublasLt::scratch_bytes ? CUBLAS_STATUS_SUCCESS
                                                            : CUBLAS_STATUS_NOT_SUPPORTED;
  }

  backends::CublasLtHandle& lt_;
  LtGemm g_;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  LtEpilogue epilogue_;
};

// dbias ⟵ bias_grad, a vector of BGRADB's bias type (a free function: nvcc's
// extended lambdas fail inside static member functions of templates).
template <class TG, class TB>
void add_bias_grad(const Kokkos::Cuda& exec, const Vector<Kokkos::Cuda, TB>& dbias,
                   const void* bias_grad, const bool overwrite) {
  const TG* const grad = static_cast<const TG*>(bias_grad);
  Kokkos::parallel_for(
      "llmk::cublaslt_add_bias_grad", Range<Kokkos::Cuda>(exec, 0, index_t(dbias.extent(0))),
      KOKKOS_LAMBDA(const index_t o) { kernels::update(dbias(o), to_float(grad[o]), overwrite); });
}

template <class TB>
void add_bias_grad(const Kokkos::Cuda& exec, const Vector<Kokkos::Cuda, TB>& dbias,
                   const LtEpilogue& bgradb, const bool overwrite) {
  if (bgradb.bias_type == CUDA_R_32F)
    add_bias_grad<float>(exec, dbias, bgradb.bias_grad, overwrite);
  else
    add_bias_grad<bf16>(exec, dbias, bgradb.bias_grad, overwrite);
}

template <class P>
bool tf32_for(const MatmulBackwardOptions& options) {
  return std::is_same_v<typename P::in, float> && options.math == Math::tf32;
}

// dinpᵀ (C×M) ⟵ weightᵀ (C×OC) · doutᵀ (OC×M), into D of type d_type (dinp
// itself, or where a DinpOutput says).
template <class P>
LtGemm dinp_product(const Problem<Kokkos::Cuda, P>& p, void* D, cudaDataType_t d_type,
                    bool tf32) {
  return {"cublasLtMatmul (dinp)", CUBLAS_OP_N, CUBLAS_OP_N, p.C, p.M, p.OC, p.C, p.OC, p.C,
          cuda_type<typename P::in>(), d_type, tf32, p.weight.data(), p.dout.data(), D};
}

// dweightᵀ (C×OC) ⟵ inpᵀ (C×M) · dout (M×OC), straight into dweight.
template <class P>
LtGemm dweight_product(const Problem<Kokkos::Cuda, P>& p, bool tf32) {
  return {"cublasLtMatmul (dweight)", CUBLAS_OP_N, CUBLAS_OP_T, p.C, p.OC, p.M, p.C, p.OC, p.C,
          cuda_type<typename P::in>(), cuda_type<typename P::dweight>(), tf32, p.inp.data(),
          p.dout.data(), p.dweight.data()};
}

// dinp = (dout·W) ⊙ gelu'(pre_gelu) by the DGELU epilogue, straight into dinp:
// when dinp is overwritten (DGELU scales beta·C too) and pre_gelu's leading
// dimension (C) is one cuBLASLt accepts.
template <class P>
bool dgelu_fits(const Problem<Kokkos::Cuda, P>& p) {
  return p.has_gelu() && p.overwrite_dinp && p.C % 8 == 0;
}

template <class P>
LtEpilogues dgelu_epilogue(const Problem<Kokkos::Cuda, P>& p) {
  LtEpilogue e;
  e.kind = CUBLASLT_EPILOGUE_DGELU;
  e.aux = p.pre_gelu.data();
  e.aux_ld = p.C;
  LtEpilogues list;
  list.add(e);
  return list;
}

// BGRADB: Σ_m dout(m, o), o < OC, the column sums of B = dout (M×OC), into
// `bias_grad` (OC floats of workspace). A float vector, so that dbias gets
// the sums rounded once; with a bf16 dweight (D) cuBLASLt refuses that (H200,
// CUDA 13: CUBLAS_STATUS_INVALID_VALUE) and takes only D's type: a bf16
// vector, used when dbias is overwritten (its one rounding is then dbias's).
// An accumulated bf16 dbias takes column_sums instead: dbias + Σ, rounded once.
template <class P>
LtEpilogues dweight_epilogues(const Problem<Kokkos::Cuda, P>& p, void* bias_grad) {
  LtEpilogues list;
  if (!p.has_bias()) return list;
  LtEpilogue e;
  e.kind = CUBLASLT_EPILOGUE_BGRADB;
  e.bias_grad = bias_grad;
  list.add(e);
  if (!std::is_same_v<typename P::dweight, float> && p.overwrite_dbias) {
    e.bias_type = cuda_type<typename P::dweight>();
    list.add(e);
  }
  return list;
}

}  // namespace

template <class ExecSpace, class P>
void cublaslt_run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
  static_assert(std::is_same_v<ExecSpace, Kokkos::Cuda>, "cuBLASLt runs on Kokkos::Cuda only");
  auto& lt = call.ctx.template resource<backends::CublasLtHandle>();
  const bool tf32 = tf32_for<P>(call.options);
  void* const scratch = call.workspace.template take<unsigned char>(CublasLt::scratch_bytes);
  backends::DinpOutput<P> dinp_out(p, call.workspace);
  void* const bias_grad =
      p.has_bias() ? call.workspace.template take<float>(std::size_t(p.OC)) : nullptr;

  // DGELU where it fits and cuBLASLt runs it; else the product where dinp_out
  // says (a bf16 dinp with GELU: a float workspace, so it is rounded once).
  std::optional<PreparedGemm> dinp;
  if (dgelu_fits(p)) {
    dinp.emplace(lt, dinp_product(p, p.dinp.data(), cuda_type<typename P::dinp>(), tf32),
                 dgelu_epilogue(p));
    if (dinp->epilogue().kind == CUBLASLT_EPILOGUE_DGELU) {
      dinp_out.gelu_fused();
    } else {
      dinp.reset();
    }
  }
  if (!dinp)
    dinp.emplace(lt, dinp_product(p, dinp_out.target(), dinp_out.type(), tf32), LtEpilogues{});
  const PreparedGemm dweight(lt, dweight_product(p, tf32), dweight_epilogues(p, bias_grad));
  const bool bias_fused = dweight.epilogue().kind == CUBLASLT_EPILOGUE_BGRADB;
  // A bias pass that is not fused runs on the context's second stream beside
  // the GEMMs, as cublas's (side_stream: null where the context has none).
  backends::SideStream* const side =
      bias_fused ? nullptr : side_stream(call, BiasStream::side, p.has_bias());

  ForkJoin fork(side);  // records an event: may throw, still before any launch
  if (side) {
    Call<Kokkos::Cuda> side_call{side->exec(), call.ctx, call.workspace, call.options};
    run_bias_pass(BiasPass::ColumnSums, side_call, p);  // declared in CublasLt::workspace
  }
  dinp->launch(call.exec, scratch, dinp_out.beta());
  dinp_out.finish(call.exec);
  dweight.launch(call.exec, scratch, p.overwrite_dweight ? 0.0f : 1.0f);
  fork.join();
  if (!p.has_bias()) return;
  if (bias_fused) {
    add_bias_grad(call.exec, p.dbias, dweight.epilogue(), p.overwrite_dbias);
  } else if (!side) {
    run_bias_pass(BiasPass::ColumnSums, call, p);
  }
}

#define LLMK_INSTANTIATE_CUBLASLT(P)                                                             \
  template void cublaslt_run<Kokkos::Cuda, P>(Call<Kokkos::Cuda>&, const Problem<Kokkos::Cuda, P>&);
LLMK_INSTANTIATE_CUBLASLT(Fp32)
LLMK_INSTANTIATE_CUBLASLT(Bf16)
LLMK_INSTANTIATE_CUBLASLT(Bf16Fp32Grad)
#undef LLMK_INSTANTIATE_CUBLASLT

}  // namespace llmk::op::matmul_backward
