// llmc-style: the matmul backward as llm.c trains GPT-2 on a GPU (its
// train_gpt2.cu with bf16 activations; in fp32 and tf32 its PRECISION=FP32
// build, whose cuBLASLt compute type is CUBLAS_COMPUTE_32F, or
// CUBLAS_COMPUTE_32F_FAST_TF32 with TF32 on), written here from the
// algorithm — independent of llmk and not copied from llm.c:
//  - dinp: one cuBLASLt GEMM, float accumulation; overwritten
//    (beta = 0) as llm.c does with --overwrite-dinp, else accumulated
//    (beta = 1); with --gelu the GELU gradient is applied in the GEMM's
//    epilogue (CUBLASLT_EPILOGUE_DGELU, pre_gelu as its auxiliary input),
//    which cuBLASLt applies to the whole result: so only with dinp overwritten;
//  - dweight: one cuBLASLt GEMM accumulating (beta = 1): float out in "fp32",
//    "tf32" and "bf16-fp32grad" (there bf16 inputs, float C and D), bf16 in "bf16";
//  - dbias: deterministic, no atomics (llm.c's idea, our kernels): blocks sum
//    slices of rows of dout into float partials, each in a fixed order; a
//    second kernel adds each column's partials, slice by slice, to dbias.
// The GEMMs' algorithms come from cuBLASLt's heuristic at each call, with a
// 32 MiB workspace, as llm.c does on Hopper.
#include "../harness/llmc_cuda.hpp"
#include "peers.hpp"

#include <Kokkos_Core.hpp>
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace llmk::perf::matmul_backward {
namespace {

void check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("llmk-perf (llmc-style): ") + what + " failed: " +
                             cublasGetStatusString(status));
}
void check(cudaError_t err, const char* what) { llmc::check(err, "llmc-style", what); }

// The peer's own cuBLASLt handle, workspace and dbias partials, made on first
// use and released at Kokkos::finalize (llmk-perf calls peers from one thread).
struct State {
  cublasLtHandle_t handle = nullptr;
  void* workspace = nullptr;
  std::size_t workspace_bytes = std::size_t(32) << 20;
  float* partials = nullptr;
  std::size_t partials_count = 0;
  int multiprocessors = 0;
};
State state;

State& get_state() {
  if (!state.handle) {
    check(cublasLtCreate(&state.handle), "cublasLtCreate");
    check(cudaMalloc(&state.workspace, state.workspace_bytes), "cudaMalloc (workspace)");
    int device = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    check(cudaDeviceGetAttribute(&state.multiprocessors, cudaDevAttrMultiProcessorCount, device),
          "cudaDeviceGetAttribute");
    Kokkos::push_finalize_hook([] {
      cudaFree(state.partials);
      cudaFree(state.workspace);
      cublasLtDestroy(state.handle);
      state = State{};
    });
  }
  return state;
}

float* partials(std::size_t count) {
  State& s = get_state();
  if (count > s.partials_count) {
    check(cudaFree(s.partials), "cudaFree");  // synchronizes: only while the size grows (warm-up)
    s.partials = nullptr;
    check(cudaMalloc(&s.partials, count * sizeof(float)), "cudaMalloc (dbias partials)");
    s.partials_count = count;
  }
  return s.partials;
}

// The descriptors of one cuBLASLt call, destroyed whatever happens.
struct Descriptors {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulPreference_t preference = nullptr;
  ~Descriptors() {
    if (preference) cublasLtMatmulPreferenceDestroy(preference);
    if (d) cublasLtMatrixLayoutDestroy(d);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

// The element and compute types of a precision's GEMMs.
struct GemmTypes {
  cudaDataType_t inputs, dinp, dweight;
  cublasComputeType_t compute;
};
GemmTypes gemm_types(const std::string& precision) {
  if (precision == "fp32") return {CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F};
  if (precision == "tf32")
    return {CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32};
  if (precision == "bf16") return {CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F};
  return {CUDA_R_16BF, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F};  // bf16-fp32grad
}
bool bf16_inputs(const std::string& precision) { return precision.rfind("bf16", 0) == 0; }

// Column-major D (m × n, ld m) ⟵ op(A) · op(B) + beta · D, A and B of type
// ab, float accumulation; with gelu_aux, D ⟵ (op(A)·op(B)) ⊙ gelu'(aux) (aux:
// m × n, ld m, of A's type). Row-major buffers are the transposes: see the callers.
void lt_matmul(cudaDataType_t ab, cublasComputeType_t compute, const void* A, bool trans_a,
               const void* B, bool trans_b, void* D, cudaDataType_t d_type, std::uint64_t m,
               std::uint64_t n, std::uint64_t k, float beta, const void* gelu_aux,
               cudaStream_t stream) {
  State& s = get_state();
  Descriptors x;
  check(cublasLtMatmulDescCreate(&x.op, compute, CUDA_R_32F), "cublasLtMatmulDescCreate");
  const cublasOperation_t ta = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t tb = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  check(cublasLtMatmulDescSetAttribute(x.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), "TRANSA");
  check(cublasLtMatmulDescSetAttribute(x.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), "TRANSB");
  const cublasLtEpilogue_t epilogue = gelu_aux ? CUBLASLT_EPILOGUE_DGELU : CUBLASLT_EPILOGUE_DEFAULT;
  check(cublasLtMatmulDescSetAttribute(x.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue),
        "EPILOGUE");
  if (gelu_aux) {
    const std::int64_t aux_ld = std::int64_t(m);
    check(cublasLtMatmulDescSetAttribute(x.op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &gelu_aux,
                                         sizeof gelu_aux),
          "EPILOGUE_AUX_POINTER");
    check(cublasLtMatmulDescSetAttribute(x.op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &aux_ld,
                                         sizeof aux_ld),
          "EPILOGUE_AUX_LD");
  }
  check(trans_a ? cublasLtMatrixLayoutCreate(&x.a, ab, k, m, std::int64_t(k))
                : cublasLtMatrixLayoutCreate(&x.a, ab, m, k, std::int64_t(m)),
        "layout A");
  check(trans_b ? cublasLtMatrixLayoutCreate(&x.b, ab, n, k, std::int64_t(n))
                : cublasLtMatrixLayoutCreate(&x.b, ab, k, n, std::int64_t(k)),
        "layout B");
  check(cublasLtMatrixLayoutCreate(&x.d, d_type, m, n, std::int64_t(m)), "layout D");
  check(cublasLtMatmulPreferenceCreate(&x.preference), "cublasLtMatmulPreferenceCreate");
  check(cublasLtMatmulPreferenceSetAttribute(x.preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                             &s.workspace_bytes, sizeof s.workspace_bytes),
        "MAX_WORKSPACE_BYTES");
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  check(cublasLtMatmulAlgoGetHeuristic(s.handle, x.op, x.a, x.b, x.d, x.d, x.preference, 1,
                                       &heuristic, &found),
        "cublasLtMatmulAlgoGetHeuristic");
  if (found == 0)
    throw std::runtime_error("llmk-perf (llmc-style): cuBLASLt has no algorithm for m=" +
                             std::to_string(m) + " n=" + std::to_string(n) +
                             " k=" + std::to_string(k) + (gelu_aux ? " with DGELU" : ""));
  const float alpha = 1.0f;
  check(cublasLtMatmul(s.handle, x.op, &alpha, A, x.a, B, x.b, &beta, D, x.d, D, x.d,
                       &heuristic.algo, s.workspace, s.workspace_bytes, stream),
        "cublasLtMatmul");
}

// ---- dbias: partial column sums over slices of rows, then their sum.

constexpr int kLanesX = 32;  // threads across columns, each 16 bytes of a row
constexpr int kLanesY = 8;   // threads down the rows of a slice
template <class In>
constexpr int kVec = 16 / int(sizeof(In));  // columns per thread: 8 bf16, 4 float
template <class In>
constexpr int kBlockColumns = kLanesX * kVec<In>;  // 256 bf16, 128 float
static_assert(kLanesX * kLanesY >= kBlockColumns<__nv_bfloat16>,
              "a block's threads sum its columns one each");

using llmc::narrow;
using llmc::widen;

// partials[slice, o] = Σ over the slice's rows of dout[m, o]. Each thread
// adds every kLanesY-th row of the slice for kVec columns; the kLanesY sums of
// a column are then added in a fixed order: the same result every run.
template <class In, bool Vectorized>
__global__ void bias_partials_kernel(float* partials, const In* dout, index_t M, index_t OC,
                                     index_t slice_rows) {
  constexpr int V = kVec<In>;
  const index_t o = (index_t(blockIdx.x) * kLanesX + threadIdx.x) * V;
  const index_t m_begin = index_t(blockIdx.y) * slice_rows;
  const index_t m_end = m_begin + slice_rows < M ? m_begin + slice_rows : M;
  float acc[V] = {};
  if (o < OC) {
    for (index_t m = m_begin + threadIdx.y; m < m_end; m += kLanesY) {
      const In* row = dout + m * OC + o;
      if constexpr (Vectorized) {
        const uint4 raw = *reinterpret_cast<const uint4*>(row);
        In values[V];
        memcpy(values, &raw, sizeof raw);
        for (int k = 0; k < V; ++k) acc[k] += widen(values[k]);
      } else {
        for (int k = 0; k < V; ++k)
          if (o + k < OC) acc[k] += widen(row[k]);
      }
    }
  }
  __shared__ float sums[kLanesY][kBlockColumns<In>];
  for (int k = 0; k < V; ++k) sums[threadIdx.y][threadIdx.x * V + k] = acc[k];
  __syncthreads();
  const int t = threadIdx.y * kLanesX + threadIdx.x;  // this thread's column in the block
  const index_t column = index_t(blockIdx.x) * kBlockColumns<In> + t;
  if (t < kBlockColumns<In> && column < OC) {
    float s = 0.0f;
    for (int r = 0; r < kLanesY; ++r) s += sums[r][t];
    partials[index_t(blockIdx.y) * OC + column] = s;
  }
}

// dbias[o] += Σ_slices partials[slice, o], slices in order; one rounding.
template <class Out>
__global__ void bias_reduce_kernel(Out* dbias, const float* partials, index_t OC, int slices) {
  const index_t o = index_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (o >= OC) return;
  float s = 0.0f;
  for (int i = 0; i < slices; ++i) s += partials[index_t(i) * OC + o];
  dbias[o] = narrow<Out>(widen(dbias[o]) + s);
}

template <class In>
void llmc_bias_typed(const PeerArgs& a) {
  const cudaStream_t stream = Kokkos::Cuda().cuda_stream();
  const auto* dout = static_cast<const In*>(a.dout);
  // Enough slices of rows to give every multiprocessor about 8 blocks.
  const index_t column_blocks = (a.OC + kBlockColumns<In> - 1) / kBlockColumns<In>;
  const index_t wanted = (8 * index_t(get_state().multiprocessors) + column_blocks - 1) / column_blocks;
  const index_t max_slices = std::max<index_t>(1, (a.M + kLanesY - 1) / kLanesY);
  const int slices = int(std::clamp<index_t>(wanted, 1, std::min<index_t>(max_slices, 65535)));
  const index_t slice_rows = std::max<index_t>(1, (a.M + slices - 1) / slices);
  float* const part = partials(std::size_t(slices) * std::size_t(a.OC));
  const dim3 grid{unsigned(column_blocks), unsigned(slices)}, block{kLanesX, kLanesY};
  const bool vectorized =
      a.OC % kVec<In> == 0 && reinterpret_cast<std::uintptr_t>(dout) % 16 == 0;
  if (vectorized)
    bias_partials_kernel<In, true><<<grid, block, 0, stream>>>(part, dout, a.M, a.OC, slice_rows);
  else
    bias_partials_kernel<In, false><<<grid, block, 0, stream>>>(part, dout, a.M, a.OC, slice_rows);
  check(cudaGetLastError(), "bias partials kernel launch");
  const unsigned reduce_blocks = unsigned((a.OC + 255) / 256);
  if (a.precision == "bf16")
    bias_reduce_kernel<<<reduce_blocks, 256, 0, stream>>>(static_cast<__nv_bfloat16*>(a.dbias),
                                                          part, a.OC, slices);
  else
    bias_reduce_kernel<<<reduce_blocks, 256, 0, stream>>>(static_cast<float*>(a.dbias), part, a.OC,
                                                          slices);
  check(cudaGetLastError(), "bias reduce kernel launch");
}

void llmc_bias(const PeerArgs& a) {
  if (a.OC == 0) return;
  if (bf16_inputs(a.precision)) llmc_bias_typed<__nv_bfloat16>(a);
  else llmc_bias_typed<float>(a);
}

// Row-major buffers seen as column-major transposes:
//   dinpᵀ (C × M) = weightᵀ (C × OC) · doutᵀ (OC × M)
//   dweightᵀ (C × OC) += inpᵀ (C × M) · dout (M × OC), dout stored as doutᵀ: op T
void llmc_style(const PeerArgs& a) {
  const cudaStream_t stream = Kokkos::Cuda().cuda_stream();
  const GemmTypes t = gemm_types(a.precision);
  llmc_bias(a);  // first, as llm.c
  if (a.M == 0 || a.C == 0) return;
  if (a.OC == 0) {  // empty sums: dinp = 0 when overwritten, nothing else changes
    const std::size_t element = bf16_inputs(a.precision) ? 2 : 4;
    if (a.overwrite_dinp)
      check(cudaMemsetAsync(a.dinp, 0, std::size_t(a.M * a.C) * element, stream), "cudaMemsetAsync");
    return;
  }
  lt_matmul(t.inputs, t.compute, a.weight, false, a.dout, false, a.dinp, t.dinp,
            std::uint64_t(a.C), std::uint64_t(a.M), std::uint64_t(a.OC),
            a.overwrite_dinp ? 0.0f : 1.0f, a.pre_gelu, stream);
  lt_matmul(t.inputs, t.compute, a.inp, false, a.dout, true, a.dweight, t.dweight,
            std::uint64_t(a.C), std::uint64_t(a.OC), std::uint64_t(a.M), 1.0f, nullptr, stream);
}

}  // namespace

std::vector<Peer> llmc_peers() {
  Peer p;
  p.name = "llmc-style";
  p.backends = {"Cuda"};
  p.precisions = {"fp32", "tf32", "bf16", "bf16-fp32grad"};
  p.run = llmc_style;
  p.bias_only = llmc_bias;
  p.bias_kernel = "perf two-pass column sum (row-slice partials, then their sum; no atomics)";
  p.gelu = "fused";
  p.gelu_needs_overwrite = true;
  p.comparison = true;
  p.description =
      "llm.c's algorithm: 2 × cuBLASLt GEMM (dinp with the DGELU epilogue under --gelu, "
      "dweight +=; fp32/tf32: its FP32 build's compute types) + a deterministic two-pass dbias";
  return {p};
}

}  // namespace llmk::perf::matmul_backward
