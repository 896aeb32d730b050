// llmk: the backward pass of a linear layer  out = inp · weightᵀ + bias.
//
//   dinp    (M × C)  += dout · weight        M = B·T rows
//   dweight (OC × C) += doutᵀ · inp
//   dbias   (OC)     += Σ_rows dout          (skipped when dbias is empty / null)
//
// All three gradients ACCUMULATE (+=), as llm.c's training code needs when a
// layer's gradients are summed over micro-batches. (The CPU reference of
// llm.c's dev/cuda/matmul_backward.cu overwrites dbias; llmk does not.)
//
// A call either completes or throws before it touches any output:
//  - bad arguments (extents, null pointers, aliasing, memory spaces, sizes
//    whose products overflow, an implementation that is unknown or not
//    available) throw std::invalid_argument naming the argument and what was
//    expected;
//  - a call that cannot run (Kokkos not initialized; with Kokkos 3, an OpenMP
//    launch from a thread other than the one that initialized Kokkos; a
//    workspace that cannot be allocated) throws std::runtime_error.
// Zero-sized dimensions are a valid no-op (with C = 0, dbias still gets Σ dout).
// Any M works: implementations whose libraries count rows in `int` (OpenBLAS,
// Kokkos 3's league sizes) get the rows in chunks below 2³¹.
//
// Concurrency: calls on distinct contexts (distinct CUDA streams, distinct
// host instances) may run at the same time from any threads. Kokkos 3.4's
// host spaces share their team scratch among all instances, so with Kokkos 3
// llmk serializes calls on Kokkos::Serial (and on OpenMP) itself; and
// Kokkos 3's OpenMP launches only from the thread that initialized Kokkos.
//
// The functions are templates on the Kokkos execution space; the library holds
// explicit instantiations for each space Kokkos was built with (Serial, OpenMP,
// Cuda). All work is enqueued on the context's execution-space instance; like
// any Kokkos kernel, call exec.fence() before reading the results on the host.
#pragma once

#include <llmk/context.hpp>
#include <llmk/types.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace llmk {

struct MatmulBackwardOptions {
  // An implementation's name (matmul_backward_impls() lists them), or "auto":
  // the first one available on the execution space, in that list's order.
  std::string impl = "auto";
  // cuBLAS paths only: let the GEMMs use TF32 tensor cores. Off by default:
  // TF32 keeps 10 mantissa bits and misses float32 tolerances.
  bool allow_tf32 = false;
};

// What an implementation declares about itself.
struct MatmulBackwardImplInfo {
  std::string name;
  bool compiled;       // part of this build (its library was found)
  bool deterministic;  // bitwise identical results from run to run
  std::string dbias;   // how dbias is computed: "fused" into a GEMM, or the kernel's name
};

// Every implementation llmk knows, compiled into this build or not, in the
// order "auto" prefers them.
const std::vector<MatmulBackwardImplInfo>& matmul_backward_impls();
// Whether `impl` ("auto" included) is compiled in and runs on ExecSpace.
template <class ExecSpace>
bool matmul_backward_available(std::string_view impl);
// The implementation that "auto" stands for on ExecSpace.
template <class ExecSpace>
std::string matmul_backward_auto_impl();
// Bytes of workspace a call with these sizes needs (see Context::use_workspace).
template <class ExecSpace>
std::size_t matmul_backward_workspace_bytes(index_t M, index_t C, index_t OC, bool has_bias,
                                            const MatmulBackwardOptions& options = {});

// Rank-2 views: dout M×OC, inp and dinp M×C, weight and dweight OC×C,
// dbias OC or empty (extent 0) to skip the bias gradient.
template <class ExecSpace>
void matmul_backward(Context<ExecSpace>& ctx, const Matrix<ExecSpace>& dinp,
                     const Matrix<ExecSpace>& dweight, const Vector<ExecSpace>& dbias,
                     const ConstMatrix<ExecSpace>& dout, const ConstMatrix<ExecSpace>& inp,
                     const ConstMatrix<ExecSpace>& weight,
                     const MatmulBackwardOptions& options = {});

// Rank-3 activations: dout B×T×OC, inp and dinp B×T×C.
template <class ExecSpace>
void matmul_backward(Context<ExecSpace>& ctx, const Tensor3<ExecSpace>& dinp,
                     const Matrix<ExecSpace>& dweight, const Vector<ExecSpace>& dbias,
                     const ConstTensor3<ExecSpace>& dout, const ConstTensor3<ExecSpace>& inp,
                     const ConstMatrix<ExecSpace>& weight,
                     const MatmulBackwardOptions& options = {});

// Raw pointers in ExecSpace's memory space, row-major as in llm.c:
// dinp/inp B·T·C floats, dout B·T·OC, dweight/weight OC·C, dbias OC or nullptr.
template <class ExecSpace>
void matmul_backward(Context<ExecSpace>& ctx, float* dinp, float* dweight, float* dbias,
                     const float* dout, const float* inp, const float* weight, index_t B,
                     index_t T, index_t C, index_t OC,
                     const MatmulBackwardOptions& options = {});

// The same three on an execution-space instance, with its implicit context.
template <class ExecSpace>
void matmul_backward(const ExecSpace& exec, const Matrix<ExecSpace>& dinp,
                     const Matrix<ExecSpace>& dweight, const Vector<ExecSpace>& dbias,
                     const ConstMatrix<ExecSpace>& dout, const ConstMatrix<ExecSpace>& inp,
                     const ConstMatrix<ExecSpace>& weight,
                     const MatmulBackwardOptions& options = {});
template <class ExecSpace>
void matmul_backward(const ExecSpace& exec, const Tensor3<ExecSpace>& dinp,
                     const Matrix<ExecSpace>& dweight, const Vector<ExecSpace>& dbias,
                     const ConstTensor3<ExecSpace>& dout, const ConstTensor3<ExecSpace>& inp,
                     const ConstMatrix<ExecSpace>& weight,
                     const MatmulBackwardOptions& options = {});
template <class ExecSpace>
void matmul_backward(const ExecSpace& exec, float* dinp, float* dweight, float* dbias,
                     const float* dout, const float* inp, const float* weight, index_t B,
                     index_t T, index_t C, index_t OC,
                     const MatmulBackwardOptions& options = {});

// For benchmarks: runs only the dbias pass that implementation `impl` runs
// (dbias += Σ_rows dout), so that its bandwidth can be measured alone.
// Throws std::invalid_argument for an implementation that fuses dbias into a
// GEMM (its info's dbias is "fused") or is not available on ExecSpace.
template <class ExecSpace>
void matmul_backward_bias_pass(Context<ExecSpace>& ctx, const Vector<ExecSpace>& dbias,
                               const ConstMatrix<ExecSpace>& dout, std::string_view impl);

}  // namespace llmk
