// llmk: the backward pass of GPT-2's layer normalization
//   out = norm · weight + bias,   norm = (inp − mean) · rstd   (per row of C)
// given the forward's per-row mean and rstd (float, as llm.c saves them):
//
//   dnorm   = dout ⊙ weight
//   dinp    (M × C) ⟵ rstd · (dnorm − mean_c(dnorm) − norm · mean_c(dnorm ⊙ norm))
//   dweight (C)     ⟵ Σ_rows dout ⊙ norm
//   dbias   (C)     ⟵ Σ_rows dout           (skipped when dbias is empty / null)
//
// M = B·T rows. "⟵" is += by default (dinp is the residual stream's gradient,
// which the layer adds to; dweight and dbias sum over micro-batches), or =
// per output (options.*_update = Update::overwrite; never read then).
//
// Element types, one of these configurations (mean and rstd are float in all):
//   "fp32"           everything float
//   "bf16"           dout, inp, weight, dinp, dweight, dbias bf16 (llm.c's training)
//   "bf16-fp32grad"  dout, inp, weight, dinp bf16; dweight and dbias float
// Every sum accumulates in float; a bf16 output is rounded once.
// Deterministic: no float atomics; the column sums are reduced in a fixed order.
//
// The contract is matmul_backward's (llmk/matmul_backward.hpp): a call either
// completes or throws before it touches any output (std::invalid_argument
// naming the argument for bad input, std::runtime_error for a call that cannot
// run), contexts, threads and streams alike.
#pragma once

#include <llmk/context.hpp>
#include <llmk/operation.hpp>
#include <llmk/tensor_ref.hpp>
#include <llmk/types.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace llmk {

struct LayernormBackwardOptions {
  // An implementation's name (llmk::impls<llmk::LayernormBackward>()), or "auto".
  std::string impl = "auto";
  Update dinp_update = Update::accumulate;
  Update dweight_update = Update::accumulate;
  Update dbias_update = Update::accumulate;
};

using LayernormBackwardImplInfo = ImplInfo;

// The operation as llmk's generic queries name it: impls<LayernormBackward>(),
// available<LayernormBackward, Space>(impl), ... (llmk/operation.hpp). Precisions:
// "fp32", "bf16", "bf16-fp32grad".
struct LayernormBackward {
  using Options = LayernormBackwardOptions;
  using ImplInfo = LayernormBackwardImplInfo;
};
extern template struct OpQueries<LayernormBackward>;  // instantiated in the library

// Bytes of workspace a call with these sizes needs (Context::use_workspace).
template <class ExecSpace>
std::size_t layernorm_backward_workspace_bytes(index_t M, index_t C, bool has_bias,
                                               const LayernormBackwardOptions& options = {},
                                               std::string_view precision = "fp32");

// Views (or TensorRefs): dinp, dout, inp of rank 2 (M, C) or 3 (B, T, C);
// mean and rstd (M) with rank-2 activations, (B, T) with rank-3, float; weight and dweight (C); dbias (C) or
// empty (no bias gradient).
template <class ExecSpace>
void layernorm_backward(Context<ExecSpace>& ctx,
                        const Out<ExecSpace>& dinp,
                        const Out<ExecSpace>& dweight,
                        const Out<ExecSpace>& dbias,
                        const In<ExecSpace>& dout,
                        const In<ExecSpace>& inp,
                        const In<ExecSpace>& weight,
                        const In<ExecSpace>& mean,
                        const In<ExecSpace>& rstd,
                        const LayernormBackwardOptions& options = {});

// Raw pointers in ExecSpace's memory, row-major as llm.c's buffers: dinp,
// dout, inp B·T·C elements; weight, dweight, dbias (nullptr: none) C; mean,
// rstd B·T floats.
template <class ExecSpace>
void layernorm_backward(Context<ExecSpace>& ctx, BufferRef dinp, BufferRef dweight,
                        BufferRef dbias, ConstBufferRef dout, ConstBufferRef inp,
                        ConstBufferRef weight, const float* mean, const float* rstd, index_t B,
                        index_t T, index_t C, const LayernormBackwardOptions& options = {});

// The same two on an execution-space instance, with its implicit context.
template <class ExecSpace>
void layernorm_backward(const ExecSpace& exec,
                        const Out<ExecSpace>& dinp,
                        const Out<ExecSpace>& dweight,
                        const Out<ExecSpace>& dbias,
                        const In<ExecSpace>& dout,
                        const In<ExecSpace>& inp,
                        const In<ExecSpace>& weight,
                        const In<ExecSpace>& mean,
                        const In<ExecSpace>& rstd,
                        const LayernormBackwardOptions& options = {}) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  layernorm_backward(ctx, dinp, dweight, dbias, dout, inp, weight, mean, rstd, options);
}
template <class ExecSpace>
void layernorm_backward(const ExecSpace& exec, BufferRef dinp, BufferRef dweight,
                        BufferRef dbias, ConstBufferRef dout, ConstBufferRef inp,
                        ConstBufferRef weight, const float* mean, const float* rstd, index_t B,
                        index_t T, index_t C, const LayernormBackwardOptions& options = {}) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  layernorm_backward(ctx, dinp, dweight, dbias, dout, inp, weight, mean, rstd, B, T, C, options);
}

}  // namespace llmk
