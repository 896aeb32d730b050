// llmk: a linear layer, the forward pass that llmk::matmul_backward
// differentiates (llm.c's matmul_forward):
//
//   out (M × OC) ⟵ inp (M × C) · weightᵀ + bias     weight OC × C, bias OC (or none)
//
// M = B·T rows. With pre_gelu (M × OC, GPT-2's MLP fc layer followed by its
// GELU, as llm.c's cuBLASLt epilogue fuses them):
//
//   pre_gelu = inp · weightᵀ + bias,   out ⟵ gelu(pre_gelu)
//
// pre_gelu is what matmul_backward takes to fuse GELU's backward (and what
// gelu_forward would have read). "⟵" is = by default, as every llmk forward
// output (out is never read: it may hold NaN), or += (options.out_update =
// Update::accumulate: a residual added in the same pass); pre_gelu is always
// written. Sums in float; a bf16 out (and pre_gelu) rounded once where the
// implementation's info says so (rounds_once: the portable kernels; cuBLASLt
// rounds pre_gelu before its GELU, as llm.c's does). out = gelu of the float
// sum in the portable kernels.
//
// Element types, one of these configurations:
//   "fp32"  everything float
//   "bf16"  everything bf16 (llm.c's training)
//
// The contract is every llmk operation's (llmk/matmul_backward.hpp): a call
// either completes or throws before it touches any output
// (std::invalid_argument naming the argument for bad input,
// std::runtime_error for a call that cannot run), contexts, threads and
// streams alike. A NaN in inp(m, c) reaches out's row m, in weight(oc, c) or
// bias(oc) its column oc. C = 0 is a call: out ⟵ bias (or 0), through GELU
// where asked.
#pragma once

#include <llmk/context.hpp>
#include <llmk/operation.hpp>
#include <llmk/tensor_ref.hpp>
#include <llmk/types.hpp>

#include <string>
#include <string_view>

namespace llmk {

struct MatmulForwardOptions {
  // An implementation's name (llmk::impls<llmk::MatmulForward>()), or "auto":
  // the first one available on the space that runs the call's precision.
  std::string impl = "auto";
  Update out_update = Update::overwrite;
};

// The operation as llmk's generic queries name it: impls<MatmulForward>(),
// available<MatmulForward, Space>(impl), ... (llmk/operation.hpp).
struct MatmulForward {
  using Options = MatmulForwardOptions;
  using ImplInfo = llmk::ImplInfo;
};
extern template struct OpQueries<MatmulForward>;  // instantiated in the library

// Bytes of workspace a call with these sizes needs (Context::use_workspace):
// split-K's partial sums ("tiled"), cuBLASLt's scratch ("cublaslt").
template <class ExecSpace>
std::size_t matmul_forward_workspace_bytes(index_t M, index_t C, index_t OC, bool has_gelu,
                                           const MatmulForwardOptions& options = {},
                                           std::string_view precision = "fp32");

// Views (or TensorRefs): out, pre_gelu (M, OC) and inp (M, C), or all three
// of rank 3 (B, T, ·); weight (OC, C); bias (OC). An empty pre_gelu is no
// GELU, an empty bias no bias.
template <class ExecSpace>
void matmul_forward(Context<ExecSpace>& ctx, const Out<ExecSpace>& out,
                    const Out<ExecSpace>& pre_gelu, const In<ExecSpace>& inp,
                    const In<ExecSpace>& weight, const In<ExecSpace>& bias,
                    const MatmulForwardOptions& options = {});

// Raw pointers in ExecSpace's memory, row-major as llm.c's buffers: out and
// pre_gelu (nullptr: no GELU) B·T·OC elements, inp B·T·C, weight OC·C, bias
// (nullptr: none) OC.
template <class ExecSpace>
void matmul_forward(Context<ExecSpace>& ctx, BufferRef out, BufferRef pre_gelu,
                    ConstBufferRef inp, ConstBufferRef weight, ConstBufferRef bias, index_t B,
                    index_t T, index_t C, index_t OC, const MatmulForwardOptions& options = {});

// The same two on an execution-space instance, with its implicit context.
template <class ExecSpace>
void matmul_forward(const ExecSpace& exec, const Out<ExecSpace>& out,
                    const Out<ExecSpace>& pre_gelu, const In<ExecSpace>& inp,
                    const In<ExecSpace>& weight, const In<ExecSpace>& bias,
                    const MatmulForwardOptions& options = {}) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  matmul_forward(ctx, out, pre_gelu, inp, weight, bias, options);
}
template <class ExecSpace>
void matmul_forward(const ExecSpace& exec, BufferRef out, BufferRef pre_gelu, ConstBufferRef inp,
                    ConstBufferRef weight, ConstBufferRef bias, index_t B, index_t T, index_t C,
                    index_t OC, const MatmulForwardOptions& options = {}) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  matmul_forward(ctx, out, pre_gelu, inp, weight, bias, B, T, C, OC, options);
}

}  // namespace llmk
