// llmk: the backward pass of a linear layer  out = inp · weightᵀ + bias,
// optionally through the GELU before it (inp = gelu(pre_gelu), GPT-2's MLP).
//
//   dinp    (M × C)  ⟵ dout · weight        M = B·T rows
//   dweight (OC × C) ⟵ doutᵀ · inp
//   dbias   (OC)     ⟵ Σ_rows dout          (skipped when dbias is empty / null)
//
// "⟵" is += (the default: gradients summed over micro-batches, as llm.c's
// dweight and dbias) or = (options.dinp_update etc. = Update::overwrite, as
// llm.c's dinp). An overwritten output is never read: it may hold anything,
// NaN included.
//
// With pre_gelu (M × C: inp = gelu(pre_gelu), GPT-2's tanh approximation),
// dinp is the gradient of pre_gelu instead, llm.c's fused dgelu:
// dinp ⟵ (dout · weight) ⊙ gelu'(pre_gelu), with = or += as above.
//
// Element types (llmk::bf16: bf16.hpp), one of these configurations:
//   "fp32"           everything float
//   "bf16"           everything bf16 (llm.c's training)
//   "bf16-fp32grad"  inputs and dinp bf16, dweight and dbias float
// Every GEMM accumulates in float; a bf16 output is rounded once, at the
// end, where the implementation's info says so (rounds_once: the portable
// kernels; cuBLAS and cuBLASLt round the product before adding an old bf16
// value or applying DGELU, as llm.c's and PyTorch's bf16 do).
// options.math = Math::tf32 lets float32 products use TF32 tensor cores
// (implementations that have them: llmk::impls<llmk::MatmulBackward>()).
//
// A call either completes or throws before it touches any output:
//  - bad arguments (extents, element types, null pointers, aliasing: an
//    output overlapping an input or another output, through any entry point,
//    or the context's workspace (Context::use_workspace) overlapping any
//    argument; memory the space cannot access (managed memory and pinned
//    host memory are accessible from both sides), sizes whose products
//    overflow, an implementation that is unknown, not available, or without
//    the precision or math mode asked for) throw std::invalid_argument
//    naming the argument and what was expected;
//  - a call that cannot run (Kokkos not initialized; with Kokkos 3, an OpenMP
//    launch from a thread other than the one that initialized Kokkos; a
//    workspace that cannot be allocated) throws std::runtime_error.
// Values are not checked: NaN and ±Inf in dout, inp or weight follow IEEE
// arithmetic, without an exception. Each reaches exactly the output
// elements whose sums include it (an Inf in dout(m, oc): dinp's row m,
// dweight's row oc, dbias(oc); in inp(m, c): dweight's column c; in
// weight(oc, c): dinp's column c), one ±Inf among finite terms making ±Inf
// (NaN where IEEE makes one: Inf − Inf, Inf · 0); every other element is
// what it would be without it. A NaN in pre_gelu makes its element of dinp
// NaN.
// Zero-sized dimensions are a valid no-op (with C = 0, dbias still gets Σ dout;
// overwritten outputs are still written: zeros).
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
#include <llmk/operation.hpp>
#include <llmk/tensor_ref.hpp>
#include <llmk/types.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace llmk {

struct MatmulBackwardOptions {
  // An implementation's name (llmk::impls<llmk::MatmulBackward>() lists them), or "auto":
  // the first one available on the execution space that runs the call's
  // precision and math mode, in that list's order.
  std::string impl = "auto";
  Math math = Math::fp32;
  Update dinp_update = Update::accumulate;
  Update dweight_update = Update::accumulate;
  Update dbias_update = Update::accumulate;
};

// What an implementation declares about itself: ImplInfo (llmk/operation.hpp)
// and how it computes dbias and GELU's backward.
struct MatmulBackwardImplInfo : ImplInfo {
  std::string dbias;  // how dbias is computed: "fused" into a GEMM, or the kernel's name
  std::string gelu;   // "fused" into the dinp product (where it can: cublaslt when dinp is
                      // overwritten), or a "separate" pass
};

// The operation as llmk's generic queries name it: impls<MatmulBackward>(),
// available<MatmulBackward, Space>(impl), ... (llmk/operation.hpp). Precisions:
// "fp32", "bf16", "bf16-fp32grad".
struct MatmulBackward {
  using Options = MatmulBackwardOptions;
  using ImplInfo = MatmulBackwardImplInfo;
};
extern template struct OpQueries<MatmulBackward>;  // instantiated in the library

// Bytes of workspace a call with these sizes needs (see Context::use_workspace).
template <class ExecSpace>
std::size_t matmul_backward_workspace_bytes(index_t M, index_t C, index_t OC, bool has_bias,
                                            const MatmulBackwardOptions& options = {},
                                            std::string_view precision = "fp32",
                                            bool has_gelu = false);

// Views (or TensorRefs), all of rank 2 (dout M×OC, inp and dinp M×C) or the
// activations of rank 3 (dout B×T×OC, inp and dinp B×T×C); weight and dweight
// OC×C; dbias OC or empty (extent 0, or nullptr) to skip the bias gradient.
template <class ExecSpace>
void matmul_backward(Context<ExecSpace>& ctx, const Out<ExecSpace>& dinp,
                     const Out<ExecSpace>& dweight, const Out<ExecSpace>& dbias,
                     const In<ExecSpace>& dout, const In<ExecSpace>& inp,
                     const In<ExecSpace>& weight, const MatmulBackwardOptions& options = {});
// The same with GELU's backward fused: pre_gelu has inp's extents and type.
template <class ExecSpace>
void matmul_backward(Context<ExecSpace>& ctx, const Out<ExecSpace>& dinp,
                     const Out<ExecSpace>& dweight, const Out<ExecSpace>& dbias,
                     const In<ExecSpace>& dout, const In<ExecSpace>& inp,
                     const In<ExecSpace>& weight, const In<ExecSpace>& pre_gelu,
                     const MatmulBackwardOptions& options = {});

// Raw pointers in ExecSpace's memory space, row-major as in llm.c:
// dinp/inp/pre_gelu B·T·C elements, dout B·T·OC, dweight/weight OC·C, dbias OC
// or nullptr. float*, llmk::bf16* or __nv_bfloat16* (BufferRef). With GELU,
// pre_gelu stands where the views' entry has it, after weight (llm.c's
// matmul_backward takes it after the sizes); nullptr there is no GELU.
template <class ExecSpace>
void matmul_backward(Context<ExecSpace>& ctx, BufferRef dinp, BufferRef dweight, BufferRef dbias,
                     ConstBufferRef dout, ConstBufferRef inp, ConstBufferRef weight, index_t B,
                     index_t T, index_t C, index_t OC, const MatmulBackwardOptions& options = {});
template <class ExecSpace>
void matmul_backward(Context<ExecSpace>& ctx, BufferRef dinp, BufferRef dweight, BufferRef dbias,
                     ConstBufferRef dout, ConstBufferRef inp, ConstBufferRef weight,
                     ConstBufferRef pre_gelu, index_t B, index_t T, index_t C, index_t OC,
                     const MatmulBackwardOptions& options = {});

// The same four on an execution-space instance, with its implicit context.
template <class ExecSpace>
void matmul_backward(const ExecSpace& exec, const Out<ExecSpace>& dinp,
                     const Out<ExecSpace>& dweight, const Out<ExecSpace>& dbias,
                     const In<ExecSpace>& dout, const In<ExecSpace>& inp,
                     const In<ExecSpace>& weight, const MatmulBackwardOptions& options = {}) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  matmul_backward(ctx, dinp, dweight, dbias, dout, inp, weight, options);
}
template <class ExecSpace>
void matmul_backward(const ExecSpace& exec, const Out<ExecSpace>& dinp,
                     const Out<ExecSpace>& dweight, const Out<ExecSpace>& dbias,
                     const In<ExecSpace>& dout, const In<ExecSpace>& inp,
                     const In<ExecSpace>& weight, const In<ExecSpace>& pre_gelu,
                     const MatmulBackwardOptions& options = {}) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  matmul_backward(ctx, dinp, dweight, dbias, dout, inp, weight, pre_gelu, options);
}
template <class ExecSpace>
void matmul_backward(const ExecSpace& exec, BufferRef dinp, BufferRef dweight, BufferRef dbias,
                     ConstBufferRef dout, ConstBufferRef inp, ConstBufferRef weight, index_t B,
                     index_t T, index_t C, index_t OC, const MatmulBackwardOptions& options = {}) {
  matmul_backward(exec, dinp, dweight, dbias, dout, inp, weight, nullptr, B, T, C, OC, options);
}
template <class ExecSpace>
void matmul_backward(const ExecSpace& exec, BufferRef dinp, BufferRef dweight, BufferRef dbias,
                     ConstBufferRef dout, ConstBufferRef inp, ConstBufferRef weight,
                     ConstBufferRef pre_gelu, index_t B, index_t T, index_t C, index_t OC,
                     const MatmulBackwardOptions& options = {}) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  matmul_backward(ctx, dinp, dweight, dbias, dout, inp, weight, pre_gelu, B, T, C, OC, options);
}

// For benchmarks: runs only the dbias pass that implementation `impl` runs
// (dbias ⟵ Σ_rows dout, options.dbias_update), so that its bandwidth can be
// measured alone. Throws std::invalid_argument for an implementation that
// fuses dbias into a GEMM (its info's dbias is "fused") or is not available
// on ExecSpace.
template <class ExecSpace>
void matmul_backward_bias_pass(Context<ExecSpace>& ctx, const Out<ExecSpace>& dbias,
                               const In<ExecSpace>& dout, std::string_view impl,
                               const MatmulBackwardOptions& options = {});

}  // namespace llmk
