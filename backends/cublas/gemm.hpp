// One GEMM, described in llmk's row-major terms, and its two executors, for
// every operation's cuBLAS work (CUDA builds; backends/ only: nothing under
// src/ names it):
//
//   D (m×n) ⟵ α·op(A)·op(B) + β·D     op(X) = X or Xᵀ, per operand
//
// for each of `batch` batches, in each of `groups` groups. GemmEx runs it
// through cublasGemmEx_64 (one batch), cublasGemmStridedBatchedEx_64 (one
// group), or for several groups cublasGemmBatchedEx_64 over pointer arrays
// (GemmPointerArrays below) or, where those are not given, a strided launch
// per group; LtMatmul through cublasLtMatmul (one group), with an epilogue
// where cuBLASLt runs one. Both prepare in their constructor (validate the
// description, convert it to cuBLAS's column-major view, and for cuBLASLt
// choose and check the algorithm) and only launch in launch(): an operation
// prepares all its GEMMs before its first write, so that a call that throws
// has written nothing. Errors name the GEMM (`what`).
//
// Batches take one stride per operand, groups a second: attention's heads
// inside a row-major (B, T, 3C) array (head h of sequence b at b·T·3C +
// h·HS) have no single stride over b·NH + h, but are NH batches of stride
// HS in B groups of stride T·3C. One launch of either library takes one
// stride; cuBLAS's pointer-array batched GEMM takes any batches, so GemmEx
// runs all groups in one launch from arrays of every batch's address (held
// in the operation's workspace). B launches of NH heads measured 1.95 ms for
// attention's four fp32 products at B 8, T 1024 on the H200, where one
// launch of all 96 heads (a permuted copy) took 1.33 ms.
//
// Users: matmul_backward's "cublas", "cublas_serial" and "cublaslt"
// (matmul_backward_cublas.cpp, matmul_backward_cublaslt.cpp), attention_backward's
// "cublas" (attention_backward_cublas.cpp).
#pragma once

#include "cublas_handles.hpp"
#include "cuda_types.hpp"

#include <llmk/types.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace llmk::backends::cublas {

enum class Op { N, T };  // op(X) = X, or Xᵀ

// Float32 FMAs, or TF32 tensor cores (float A and B only: TF32 misses
// float32 tolerances). bf16 inputs always sum in float on the tensor cores.
enum class Compute { fp32, tf32 };

// A row-major matrix of every batch: batch j's at data + j·stride, its row r
// at + r·ld (elements of `type`: CUDA_R_32F or CUDA_R_16BF, llmk::bf16).
template <class Pointer>
struct Operand {
  Pointer data = nullptr;
  index_t ld = 0;
  cudaDataType_t type = CUDA_R_32F;
  index_t stride = 0;  // between batches; 0: every batch reads the same matrix (A, B)
  index_t group_stride = 0;  // between groups of batches (Gemm::groups)
};
using Input = Operand<const void*>;
using Output = Operand<void*>;

// What cuBLASLt computes besides the product, in this description's terms
// (llm.c's uses these four). With α = 1 only, and one batch (the epilogues'
// batch strides are not built).
struct Epilogue {
  enum class Kind { none, dgelu, bias_grad, bias, gelu_aux };
  Kind kind = Kind::none;
  // dgelu:     D = gelu'(aux) ⊙ (op(A)·op(B) + β·D): aux is m×n of D's type,
  //            row-major with leading dimension aux_ld ≥ n; cuBLASLt takes
  //            only multiples of 8 (others are refused without asking).
  // gelu_aux:  aux = op(A)·op(B) + β·D (+ bias(j), j < n, where bias is
  //            given), written; D = gelu(aux). aux as dgelu's (a linear
  //            layer's pre-activation, saved for its backward).
  void* aux = nullptr;  // (read by dgelu, written by gelu_aux)
  index_t aux_ld = 0;
  // bias_grad: bias[i] = Σ_k op(A)(i, k), i < m, written (not added to),
  //            bias_type CUDA_R_32F or CUDA_R_16BF: the bias gradient of the
  //            layer whose weight gradient this GEMM is (op(A) = doutᵀ).
  // bias:      D = op(A)·op(B) + β·D + bias(j) in every row, j < n (read):
  //            a linear layer's bias.
  void* bias = nullptr;
  cudaDataType_t bias_type = CUDA_R_32F;
};

// The epilogues a GEMM asks for, best first: LtMatmul runs the first that
// cuBLASLt accepts, else none, and says which (LtMatmul::epilogue()); the
// caller does the work of a refused one another way. GemmEx runs none.
struct Epilogues {
  Epilogue choices[2];
  int count = 0;
  void add(const Epilogue& e);
};

struct Gemm {
  const char* what = "";  // names the GEMM in errors ("dinp"): a literal, it outlives the executors
  index_t m = 0, n = 0, k = 0;
  Op op_a = Op::N, op_b = Op::N;
  Input a, b;                       // of one type; float A and B need a float D
  Output d;                         // batches of D must not overlap, nor D meet A or B
  float alpha = 1.0f, beta = 0.0f;  // β = 0: D is not read (it may hold NaN)
  Compute compute = Compute::fp32;
  index_t batch = 1;
  index_t groups = 1;         // of `batch` batches each; more than one: GemmEx only
  Epilogues epilogues;        // LtMatmul only
  // cuBLASLt's scratch, used from its first 256-byte boundary (GemmEx:
  // cuBLAS's own).
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
};

// Throws std::invalid_argument naming the GEMM and the argument when g is
// not a GEMM both executors run: a size below 1, a null pointer, a leading
// dimension shorter than its row, a negative stride, batches of D that may
// overlap (groups of D must lie one after the other), an output that meets an input, types cuBLAS has no GEMM for,
// TF32 with bf16 inputs, an epilogue that is incomplete, with α ≠ 1 or with
// batches. (Overlap is judged by address ranges; an interleaved D passes
// when its batches are side by side within its rows.)
void check(const Gemm& g);

// cuBLAS's column-major view of a GEMM (gemm.cpp says how it is derived).
struct ColumnMajor {
  cublasOperation_t trans_a, trans_b;
  index_t m, n, k;
  const void* A;
  index_t lda, stride_a;
  const void* B;
  index_t ldb, stride_b;
  void* D;
  index_t ldd, stride_d;
  index_t group_stride_a, group_stride_b, group_stride_d;
  cudaDataType_t ab_type, d_type;
};
ColumnMajor column_major(const Gemm& g);

cublasComputeType_t compute_type(Compute c);

// check_cublas(status, "<call> (<what>)"), the message built only on failure.
void check_launch(cublasStatus_t status, const char* call, const char* what);

// cublasGemmEx_64 (one batch), cublasGemmStridedBatchedEx_64 (one group),
// cublasGemmBatchedEx_64 (groups, with pointer arrays) or a strided launch
// per group, with CUBLAS_GEMM_DEFAULT (cuBLAS picks its algorithm at launch).
class GemmEx {
 public:
  // check(g), and g asks for no epilogue.
  explicit GemmEx(const Gemm& g);
  // On the handle's stream (the context's: CublasHandle). Throws
  // std::runtime_error naming the GEMM when cuBLAS fails.
  void launch(const CublasHandle& handle) const;
  // Whether its groups run as one launch (GemmPointerArrays::add took it).
  bool uses_pointer_arrays() const { return arrays_ != nullptr; }

 private:
  friend class GemmPointerArrays;
  const char* what_;
  ColumnMajor c_;
  float alpha_, beta_;
  cublasComputeType_t compute_;
  index_t batch_, groups_;
  const void* const* arrays_ = nullptr;  // on the device: every batch's A, then B's, then D's
};

// The pointer arrays of a call's grouped GemmEx's, written into device
// memory the caller gives (its workspace) by one small kernel on the
// context's stream: add() each GEMM, then write() before the first launch.
// (Not a copy from the host: cudaMemcpyAsync from pageable memory may wait
// for the stream, and pinned memory would need a buffer per context kept
// until its copy has run.) A GEMM whose addresses are not all 16-byte
// aligned is not added: its groups keep a launch each (cuBLAS cannot see
// the alignment of addresses it reads from device memory).
class GemmPointerArrays {
 public:
  // Pointers a grouped GEMM's arrays take: 3 · batch · groups (0 for one group).
  static std::size_t count(const Gemm& g);
  GemmPointerArrays(const void** device, std::size_t capacity);
  // Throws std::logic_error past the capacity.
  void add(GemmEx& gemm);
  // Throws std::runtime_error when the kernel does not launch.
  void write(const Kokkos::Cuda& exec) const;

  // One array: batch (g, j) at data + (g · group_stride + j · stride) bytes,
  // written to the device array from `first` on.
  struct Array {
    const void* data;
    std::int64_t stride, group_stride;  // bytes
    std::int64_t first;
    std::int32_t batch, groups;
  };

 private:
  const void** device_;
  std::size_t capacity_, used_ = 0;
  std::vector<Array> arrays_;
};

// cublasLtMatmul with the heuristic's first algorithm for this GEMM, told
// the real alignment of every pointer (of every batch) and the workspace,
// checked by cublasLtMatmulAlgoCheck; choices and refusals cached in the
// context's handle (CublasLtHandle::algos). A bf16 D sums split-K partials
// in float (the heuristic is told so).
class LtMatmul {
 public:
  // check(g) (std::invalid_argument), then g with the first of its
  // epilogues that cuBLASLt runs, else without one. Throws
  // std::runtime_error naming the GEMM when cuBLASLt runs no algorithm for
  // it without an epilogue.
  LtMatmul(CublasLtHandle& lt, const Gemm& g);

  // The epilogue it runs (Kind::none: none).
  const Epilogue& epilogue() const { return epilogue_; }

  // On exec's stream (the context's). Throws std::runtime_error naming the
  // GEMM when cuBLASLt fails.
  void launch(const Kokkos::Cuda& exec) const;

 private:
  // cuBLASLt's descriptors of the GEMM, released with it: a member, so
  // also when the constructor throws.
  struct Descriptors {
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
    Descriptors() = default;
    ~Descriptors();
    Descriptors(const Descriptors&) = delete;
    Descriptors& operator=(const Descriptors&) = delete;
    void release_op();
  };

  void make_layouts();
  void make_desc(const Epilogue& e);
  bool prepare(const Epilogue& e);
  LtGemmKey key_of(const Epilogue& e) const;
  std::optional<cublasLtMatmulAlgo_t> ask(const Epilogue& e, const LtGemmKey& key);
  cublasStatus_t heuristic(const LtGemmKey& key, cublasLtMatmulHeuristicResult_t& result);
  cublasStatus_t check_algo(const cublasLtMatmulAlgo_t& algo);

  CublasLtHandle& lt_;
  const char* what_;
  ColumnMajor c_;
  float alpha_, beta_;
  Compute compute_;
  index_t batch_;
  void* workspace_;
  std::size_t workspace_bytes_;
  Descriptors desc_;
  cublasLtMatmulAlgo_t algo_{};
  Epilogue epilogue_;
};

}  // namespace llmk::backends::cublas
