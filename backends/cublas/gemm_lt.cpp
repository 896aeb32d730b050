// The cuBLASLt executor of the GEMM description (gemm.hpp): descriptors and
// layouts of cuBLAS's column-major view, the heuristic's first algorithm
// told the real alignments, checked before any launch, cached per context.
#include "gemm.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace llmk::backends::cublas {
namespace {

template <class T>
void set_attribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, const T& value) {
  check_cublas(cublasLtMatmulDescSetAttribute(desc, attr, &value, sizeof(value)),
               "cublasLtMatmulDescSetAttribute");
}

template <class T>
void set_attribute(cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attr,
                   const T& value) {
  check_cublas(cublasLtMatrixLayoutSetAttribute(layout, attr, &value, sizeof(value)),
               "cublasLtMatrixLayoutSetAttribute");
}

// The largest power of two, up to 256, that divides the address of every
// batch's matrix (the address and, with batches, the stride in bytes).
// cuBLASLt's heuristic assumes 256-byte aligned matrices unless told
// otherwise, and the algorithm it then picks fails with
// CUBLAS_STATUS_INVALID_VALUE on less: on any Kokkos allocation (its data
// follows a 128-byte header) or slice of one.
std::uint32_t alignment(const void* ptr, std::uintptr_t stride_bytes = 0) {
  if (ptr == nullptr) return 0;
  const std::uintptr_t address = reinterpret_cast<std::uintptr_t>(ptr) | stride_bytes;
  std::uint32_t align = 256;
  while (align > 2 && address % align != 0) align /= 2;
  return align;
}

// cuBLASLt's scratch from `bytes` at `p`, its start rounded up to 256
// bytes: cublasLtMatmul failed with CUBLAS_STATUS_INVALID_VALUE on a
// workspace at a Kokkos allocation's 128-byte alignment (H200, every test of
// tests/test_cublas_gemm.cpp's own workspace; matmul's, carved 256-aligned
// from the context's, ran).
struct Scratch {
  void* data;
  std::size_t bytes;
};
Scratch aligned_scratch(void* p, const std::size_t bytes) {
  if (p == nullptr) return {nullptr, 0};
  const std::uintptr_t address = reinterpret_cast<std::uintptr_t>(p);
  const std::size_t skip = (256 - address % 256) % 256;
  if (skip >= bytes) return {nullptr, 0};
  return {static_cast<unsigned char*>(p) + skip, bytes - skip};
}

cublasLtEpilogue_t lt_kind(const Epilogue& e) {
  switch (e.kind) {
    case Epilogue::Kind::dgelu:
      return CUBLASLT_EPILOGUE_DGELU;
    case Epilogue::Kind::bias_grad:
      return CUBLASLT_EPILOGUE_BGRADB;  // gemm.cpp: column_major
    case Epilogue::Kind::bias:
      return CUBLASLT_EPILOGUE_BIAS;  // cuBLAS's D rows are our columns
    case Epilogue::Kind::gelu_aux:
      return e.bias ? CUBLASLT_EPILOGUE_GELU_AUX_BIAS : CUBLASLT_EPILOGUE_GELU_AUX;
    case Epilogue::Kind::none:
      break;
  }
  return CUBLASLT_EPILOGUE_DEFAULT;
}

// The alignment cuBLASLt sees of the epilogue's vectors and matrices.
std::uint32_t epilogue_alignment(const Epilogue& e) {
  const std::uint32_t aux = alignment(e.aux), bias = alignment(e.bias);
  if (!e.aux) return bias;
  return e.bias ? std::min(aux, bias) : aux;
}

}  // namespace

LtMatmul::LtMatmul(CublasLtHandle& lt, const Gemm& g)
    : lt_(lt),
      what_(g.what),
      c_{},
      alpha_(g.alpha),
      beta_(g.beta),
      compute_(g.compute),
      batch_(g.batch),
      workspace_(aligned_scratch(g.workspace, g.workspace_bytes).data),
      workspace_bytes_(aligned_scratch(g.workspace, g.workspace_bytes).bytes) {
  check(g);
  if (g.groups != 1)
    throw std::invalid_argument(std::string("llmk: GEMM '") + what_ + "': groups = " +
                                std::to_string(g.groups) +
                                ": cuBLASLt's executor runs one group (GemmEx runs several)");
  if (g.batch > std::numeric_limits<std::int32_t>::max())
    throw std::invalid_argument(std::string("llmk: GEMM '") + what_ +
                                "': batch = " + std::to_string(g.batch) +
                                " exceeds cuBLASLt's batch count (int32)");
  c_ = column_major(g);
  make_layouts();
  for (int i = 0; i < g.epilogues.count; ++i) {
    try {
      if (prepare(g.epilogues.choices[i])) return;
    } catch (const std::runtime_error&) {
      // An epilogue attribute this cuBLASLt rejects: a refusal too.
    }
  }
  prepare(Epilogue{});  // throws when there is no algorithm
}

LtMatmul::Descriptors::~Descriptors() {
  release_op();
  if (a) cublasLtMatrixLayoutDestroy(a);
  if (b) cublasLtMatrixLayoutDestroy(b);
  if (d) cublasLtMatrixLayoutDestroy(d);
}

void LtMatmul::Descriptors::release_op() {
  if (op) cublasLtMatmulDescDestroy(op);
  op = nullptr;
}

void LtMatmul::launch(const Kokkos::Cuda& exec) const {
  check_launch(cublasLtMatmul(lt_.get(), desc_.op, &alpha_, c_.A, desc_.a, c_.B, desc_.b, &beta_,
                              c_.D, desc_.d, c_.D, desc_.d, &algo_, workspace_, workspace_bytes_,
                              exec.cuda_stream()),
               "cublasLtMatmul", what_);
}

// Stored (not transposed) shapes of cuBLAS's A and B; one layout for C and D.
void LtMatmul::make_layouts() {
  const bool ta = c_.trans_a != CUBLAS_OP_N, tb = c_.trans_b != CUBLAS_OP_N;
  check_cublas(
      cublasLtMatrixLayoutCreate(&desc_.a, c_.ab_type, ta ? c_.k : c_.m, ta ? c_.m : c_.k, c_.lda),
      "cublasLtMatrixLayoutCreate (A)");
  check_cublas(
      cublasLtMatrixLayoutCreate(&desc_.b, c_.ab_type, tb ? c_.n : c_.k, tb ? c_.k : c_.n, c_.ldb),
      "cublasLtMatrixLayoutCreate (B)");
  check_cublas(cublasLtMatrixLayoutCreate(&desc_.d, c_.d_type, c_.m, c_.n, c_.ldd),
               "cublasLtMatrixLayoutCreate (D)");
  if (batch_ == 1) return;
  const std::pair<cublasLtMatrixLayout_t, index_t> strides[] = {
      {desc_.a, c_.stride_a}, {desc_.b, c_.stride_b}, {desc_.d, c_.stride_d}};
  for (const auto& [layout, stride] : strides) {
    set_attribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, std::int32_t(batch_));
    set_attribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, std::int64_t(stride));
  }
}

void LtMatmul::make_desc(const Epilogue& e) {
  desc_.release_op();
  check_cublas(cublasLtMatmulDescCreate(&desc_.op, compute_type(compute_), CUDA_R_32F),
               "cublasLtMatmulDescCreate");
  set_attribute(desc_.op, CUBLASLT_MATMUL_DESC_TRANSA, c_.trans_a);
  set_attribute(desc_.op, CUBLASLT_MATMUL_DESC_TRANSB, c_.trans_b);
  if (e.kind == Epilogue::Kind::none) return;
  set_attribute(desc_.op, CUBLASLT_MATMUL_DESC_EPILOGUE, lt_kind(e));
  if (e.bias) {
    set_attribute(desc_.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, e.bias);
    // The default bias type is D's.
    if (e.bias_type != c_.d_type)
      set_attribute(desc_.op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, std::int32_t(e.bias_type));
  }
  if (e.aux) {
    set_attribute(desc_.op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, e.aux);
    set_attribute(desc_.op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, std::int64_t(e.aux_ld));
  }
}

LtGemmKey LtMatmul::key_of(const Epilogue& e) const {
  const auto stride_bytes = [&](index_t stride, cudaDataType_t type) {
    return batch_ == 1 ? std::uintptr_t(0) : std::uintptr_t(stride) * element_bytes(type);
  };
  const bool bias = e.bias != nullptr;
  return {int(c_.trans_a),
          int(c_.trans_b),
          c_.m,
          c_.n,
          c_.k,
          c_.lda,
          c_.ldb,
          c_.ldd,
          batch_,
          batch_ == 1 ? 0 : c_.stride_a,
          batch_ == 1 ? 0 : c_.stride_b,
          batch_ == 1 ? 0 : c_.stride_d,
          int(compute_),
          int(c_.ab_type),
          int(c_.ab_type),
          int(c_.d_type),
          unsigned(lt_kind(e)),
          bias ? int(e.bias_type) : -1,
          workspace_bytes_,
          alignment(c_.A, stride_bytes(c_.stride_a, c_.ab_type)),
          alignment(c_.B, stride_bytes(c_.stride_b, c_.ab_type)),
          alignment(c_.D, stride_bytes(c_.stride_d, c_.d_type)),
          epilogue_alignment(e)};
}

// Describes the GEMM with epilogue e and takes the algorithm cuBLASLt
// chooses for it (cached in the context's handle, refusals included).
// false: cuBLASLt runs no algorithm for it.
bool LtMatmul::prepare(const Epilogue& e) {
  // cuBLASLt takes a GELU input whose leading dimension is a multiple of 8
  // (CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD): a refusal, without asking.
  if (e.aux && e.aux_ld % 8 != 0) return false;
  make_desc(e);
  const LtGemmKey key = key_of(e);
  auto it = lt_.algos.find(key);
  if (it == lt_.algos.end()) it = lt_.algos.emplace(key, ask(e, key)).first;
  if (!it->second) return false;
  algo_ = *it->second;
  epilogue_ = e;
  return true;
}

// The heuristic's first choice, checked (cublasLtMatmulAlgoCheck fails for
// combinations that would fail at launch). An epilogue the heuristic or the
// check refuses is a refusal; without an epilogue, an error.
std::optional<cublasLtMatmulAlgo_t> LtMatmul::ask(const Epilogue& e, const LtGemmKey& key) {
  cublasLtMatmulHeuristicResult_t result{};
  const char* step = "cublasLtMatmulAlgoGetHeuristic";
  cublasStatus_t status = heuristic(key, result);
  if (status == CUBLAS_STATUS_SUCCESS) {
    step = "cublasLtMatmulAlgoCheck";
    status = check_algo(result.algo);
  }
  if (status == CUBLAS_STATUS_SUCCESS) return result.algo;
  if (e.kind != Epilogue::Kind::none) return std::nullopt;  // the caller's other way
  check_launch(status, step, what_);                        // throws
  return std::nullopt;
}

// NOT_SUPPORTED when it finds nothing.
cublasStatus_t LtMatmul::heuristic(const LtGemmKey& key, cublasLtMatmulHeuristicResult_t& result) {
  cublasLtMatmulPreference_t pref = nullptr;
  check_cublas(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
  const std::size_t max_workspace = workspace_bytes_;
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                       &max_workspace, sizeof(max_workspace));
  const std::pair<cublasLtMatmulPreferenceAttributes_t, std::uint32_t> aligns[] = {
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, key.align_a},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, key.align_b},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, key.align_d},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, key.align_d}};
  for (const auto& [attribute, align] : aligns)
    cublasLtMatmulPreferenceSetAttribute(pref, attribute, &align, sizeof(align));
  // A bf16 output: no split-K algorithm that adds its partial sums in the
  // output type (INPLACE, OUTPUT_TYPE): the sums stay float. Left to the
  // heuristic, cuBLASLt did that on the H200 for a small output of long sums
  // (matmul_backward's longOC test: dinp 5 × 3, 2050 terms each; 6 of 15
  // elements one bf16 ulp from the nearest); cublasGemmEx has no such control.
  if (key.d_type != int(CUDA_R_32F)) {
    const std::uint32_t schemes =
        CUBLASLT_REDUCTION_SCHEME_NONE | CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &schemes,
                                         sizeof(schemes));
  }
  int found = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(
      lt_.get(), desc_.op, desc_.a, desc_.b, desc_.d, desc_.d, pref, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (status != CUBLAS_STATUS_SUCCESS) return status;
  return found > 0 ? result.state : CUBLAS_STATUS_NOT_SUPPORTED;
}

// NOT_SUPPORTED when the algorithm needs more workspace than the GEMM has.
cublasStatus_t LtMatmul::check_algo(const cublasLtMatmulAlgo_t& algo) {
  cublasLtMatmulHeuristicResult_t checked{};
  const cublasStatus_t status = cublasLtMatmulAlgoCheck(lt_.get(), desc_.op, desc_.a, desc_.b,
                                                        desc_.d, desc_.d, &algo, &checked);
  if (status != CUBLAS_STATUS_SUCCESS) return status;
  return checked.workspaceSize <= workspace_bytes_ ? CUBLAS_STATUS_SUCCESS
                                                   : CUBLAS_STATUS_NOT_SUPPORTED;
}

}  // namespace llmk::backends::cublas
