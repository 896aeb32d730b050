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
// Every entry point validates its arguments before touching any output and
// throws std::invalid_argument naming the argument, its extents and what was
// expected. Zero-sized dimensions are a valid no-op.
//
// The functions are templates on the Kokkos execution space; the library holds
// explicit instantiations for each space Kokkos was built with (Serial, OpenMP,
// Cuda). All work is enqueued on the given execution-space instance; like any
// Kokkos kernel, call exec.fence() before reading the results on the host.
#pragma once

#include <llmk/types.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace llmk {

// Implementations, in the order the perf table shows them (slowest first).
enum class Impl {
  Auto,           // the fastest available on the execution space
  Naive,          // flat parallel_for per output element (portable Kokkos)
  Team,           // hierarchical TeamPolicy kernels (portable Kokkos)
  Tiled,          // register-tiled hierarchical GEMM kernels (portable Kokkos)
  KokkosKernels,  // KokkosBlas::gemm (+ llmk's dbias reduction)
  Cublas,         // cuBLAS sgemm (Kokkos::Cuda only)
  CublasLt,       // cuBLASLt with the BGRADB epilogue (Kokkos::Cuda only)
};

std::string_view impl_name(Impl impl);
// Parses "auto", "naive", "team", "tiled", "kokkoskernels", "cublas", "cublaslt";
// throws std::invalid_argument listing the valid names.
Impl parse_impl(std::string_view name);
const std::vector<Impl>& all_impls();  // every Impl except Auto

struct MatmulBackwardOptions {
  Impl impl = Impl::Auto;
  // cuBLAS paths only: let the GEMMs use TF32 tensor cores. Off by default:
  // TF32 keeps 10 mantissa bits and misses float32 tolerances.
  bool allow_tf32 = false;
};

// Whether an implementation is compiled in and runs on ExecSpace.
template <class ExecSpace>
bool impl_available(Impl impl);
// The implementation that Impl::Auto stands for on ExecSpace.
template <class ExecSpace>
Impl resolve_auto();
// Kokkos' name of the execution space ("Serial", "OpenMP", "Cuda").
template <class ExecSpace>
std::string backend_name();

// Rank-2 views: dout M×OC, inp and dinp M×C, weight and dweight OC×C,
// dbias OC or empty (extent 0) to skip the bias gradient.
template <class ExecSpace>
void matmul_backward(const ExecSpace& exec, const Matrix<ExecSpace>& dinp,
                     const Matrix<ExecSpace>& dweight, const Vector<ExecSpace>& dbias,
                     const ConstMatrix<ExecSpace>& dout, const ConstMatrix<ExecSpace>& inp,
                     const ConstMatrix<ExecSpace>& weight,
                     const MatmulBackwardOptions& options = {});

// Rank-3 activations: dout B×T×OC, inp and dinp B×T×C.
template <class ExecSpace>
void matmul_backward(const ExecSpace& exec, const Tensor3<ExecSpace>& dinp,
                     const Matrix<ExecSpace>& dweight, const Vector<ExecSpace>& dbias,
                     const ConstTensor3<ExecSpace>& dout, const ConstTensor3<ExecSpace>& inp,
                     const ConstMatrix<ExecSpace>& weight,
                     const MatmulBackwardOptions& options = {});

// Raw pointers in ExecSpace's memory space, row-major as in llm.c:
// dinp/inp B·T·C floats, dout B·T·OC, dweight/weight OC·C, dbias OC or nullptr.
template <class ExecSpace>
void matmul_backward(const ExecSpace& exec, float* dinp, float* dweight, float* dbias,
                     const float* dout, const float* inp, const float* weight, index_t B,
                     index_t T, index_t C, index_t OC,
                     const MatmulBackwardOptions& options = {});

}  // namespace llmk
