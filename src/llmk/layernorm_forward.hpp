// llmk: GPT-2's layer normalization, the forward pass that
// llmk::layernorm_backward differentiates, per row of C:
//
//   mean = Σ inp / C,   rstd = 1 / √(Σ (inp − mean)² / C + eps)
//   out  (M × C) ⟵ (inp − mean) · rstd · weight + bias     (no bias: bias empty / null)
//
// M = B·T rows. mean and rstd (M, float) are written, in the layout
// layernorm_backward takes, as llm.c's layernorm_forward saves them; "⟵" is
// = by default, as every llmk forward output (out is never read; it may hold
// NaN), or += (options.out_update = Update::accumulate). Sums in float, in
// an order fixed by C (two passes: the mean, then the squared deviations);
// a bf16 out rounded once. Deterministic. With C = 0: mean 0, rstd 1/√eps.
//
// Element types, one of these configurations (mean and rstd are float in all):
//   "fp32"  inp, weight, bias, out float
//   "bf16"  inp, weight, bias, out bf16 (llm.c's training)
//
// The contract is every llmk operation's (llmk/matmul_backward.hpp): a call
// either completes or throws before it touches any output
// (std::invalid_argument naming the argument for bad input,
// std::runtime_error for a call that cannot run), contexts, threads and
// streams alike.
#pragma once

#include <llmk/context.hpp>
#include <llmk/operation.hpp>
#include <llmk/tensor_ref.hpp>
#include <llmk/types.hpp>

#include <string>
#include <string_view>

namespace llmk {

struct LayernormForwardOptions {
  // An implementation's name (llmk::impls<llmk::LayernormForward>()), or "auto".
  std::string impl = "auto";
  Update out_update = Update::overwrite;
  float eps = 1e-5f;  // GPT-2's (and llm.c's)
};

// The operation as llmk's generic queries name it: impls<LayernormForward>(),
// available<LayernormForward, Space>(impl), ... (llmk/operation.hpp).
struct LayernormForward {
  using Options = LayernormForwardOptions;
  using ImplInfo = llmk::ImplInfo;
};
extern template struct OpQueries<LayernormForward>;  // instantiated in the library

// Bytes of workspace a call with these sizes needs (Context::use_workspace): 0.
template <class ExecSpace>
std::size_t layernorm_forward_workspace_bytes(index_t M, index_t C,
                                              const LayernormForwardOptions& options = {},
                                              std::string_view precision = "fp32");

// Views (or TensorRefs): out and inp of rank 2 (M, C) or 3 (B, T, C); mean
// and rstd (M) with rank-2 activations, (B, T) with rank-3, float; weight
// (C); bias (C) or empty (none).
template <class ExecSpace>
void layernorm_forward(Context<ExecSpace>& ctx, const Out<ExecSpace>& out,
                       const Out<ExecSpace>& mean, const Out<ExecSpace>& rstd,
                       const In<ExecSpace>& inp, const In<ExecSpace>& weight,
                       const In<ExecSpace>& bias, const LayernormForwardOptions& options = {});

// Raw pointers in ExecSpace's memory, row-major as llm.c's buffers: out, inp
// B·T·C elements; mean, rstd B·T floats; weight, bias (nullptr: none) C.
template <class ExecSpace>
void layernorm_forward(Context<ExecSpace>& ctx, BufferRef out, float* mean, float* rstd,
                       ConstBufferRef inp, ConstBufferRef weight, ConstBufferRef bias, index_t B,
                       index_t T, index_t C, const LayernormForwardOptions& options = {});

// The same two on an execution-space instance, with its implicit context.
template <class ExecSpace>
void layernorm_forward(const ExecSpace& exec, const Out<ExecSpace>& out, const Out<ExecSpace>& mean,
                       const Out<ExecSpace>& rstd, const In<ExecSpace>& inp,
                       const In<ExecSpace>& weight, const In<ExecSpace>& bias,
                       const LayernormForwardOptions& options = {}) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  layernorm_forward(ctx, out, mean, rstd, inp, weight, bias, options);
}
template <class ExecSpace>
void layernorm_forward(const ExecSpace& exec, BufferRef out, float* mean, float* rstd,
                       ConstBufferRef inp, ConstBufferRef weight, ConstBufferRef bias, index_t B,
                       index_t T, index_t C, const LayernormForwardOptions& options = {}) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  layernorm_forward(ctx, out, mean, rstd, inp, weight, bias, B, T, C, options);
}

}  // namespace llmk
