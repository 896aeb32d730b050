// llmk: GPT-2's causal self-attention forward, flash-attention style: the
// output and the per-row log-sum-exp that attention_backward_recompute takes,
// with no T × T array. qkv (B, T, 3C) holds q, k, v side by side (llm.c's
// layout), each NH heads of HS = C / NH channels; per (b, h), α = 1/√HS,
// over the causal keys u ≤ t of each query t:
//
//   lse[b, h, t] = log Σ_{u ≤ t} exp(α q_t·k_u)                (B, NH, T), float
//   out_h[t]     ⟵ Σ_{u ≤ t} exp(α q_t·k_u − lse[b, h, t]) · v_u
//
// out (B, T, C) holds the heads side by side, as dout of the backward.
// "⟵" is = by default, as every llmk forward output (out is never read; it
// may hold NaN), or += (options.out_update = Update::accumulate); lse is
// always written. Sums in float (a running maximum and sum per row: the
// online softmax), each over its causal keys in increasing order; the
// masked keys are neither computed nor read, so a NaN reaches exactly the
// rows that depend on it. Deterministic.
//
// Element types, one of these configurations (lse is float in both):
//   "fp32"  qkv, out float
//   "bf16"  qkv, out bf16 (llm.c's training); "flash_mma" rounds each
//           probability to bf16 for its product with v (the tensor cores'
//           operand), as flash-attention does.
//
// The contract is every llmk operation's (llmk/matmul_backward.hpp): a call
// either completes or throws before it touches any output
// (std::invalid_argument naming the argument for bad input,
// std::runtime_error for a call that cannot run), contexts, threads and
// streams alike. Zero-sized B, T or C are valid no-ops (C = 0: lse is the
// log of the causal count, out has no elements); NH must be ≥ 1 and divide C.
#pragma once

#include <llmk/context.hpp>
#include <llmk/operation.hpp>
#include <llmk/tensor_ref.hpp>
#include <llmk/types.hpp>

#include <string>
#include <string_view>

namespace llmk {

struct AttentionForwardOptions {
  // An implementation's name (llmk::impls<llmk::AttentionForward>()), or "auto".
  std::string impl = "auto";
  Update out_update = Update::overwrite;
};

// The operation as llmk's generic queries name it: impls<AttentionForward>(),
// available<AttentionForward, Space>(impl), ... (llmk/operation.hpp).
struct AttentionForward {
  using Options = AttentionForwardOptions;
  using ImplInfo = llmk::ImplInfo;
};
extern template struct OpQueries<AttentionForward>;  // instantiated in the library

// Bytes of workspace a call with these sizes needs (Context::use_workspace): 0.
template <class ExecSpace>
std::size_t attention_forward_workspace_bytes(index_t B, index_t T, index_t C, index_t NH,
                                              const AttentionForwardOptions& options = {},
                                              std::string_view precision = "fp32");

// Views (or TensorRefs): out (B, T, C) or (B·T, C) and qkv (B, T, 3C) or
// (B·T, 3C) of the same rank; lse (B, NH, T) float, which gives B, NH and T.
template <class ExecSpace>
void attention_forward(Context<ExecSpace>& ctx, const Out<ExecSpace>& out,
                       const Out<ExecSpace>& lse, const In<ExecSpace>& qkv,
                       const AttentionForwardOptions& options = {});

// Raw pointers in ExecSpace's memory, row-major as llm.c's buffers: out B·T·C
// elements, lse B·NH·T floats, qkv B·T·3C elements.
template <class ExecSpace>
void attention_forward(Context<ExecSpace>& ctx, BufferRef out, float* lse, ConstBufferRef qkv,
                       index_t B, index_t T, index_t C, index_t NH,
                       const AttentionForwardOptions& options = {});

// The same two on an execution-space instance, with its implicit context.
template <class ExecSpace>
void attention_forward(const ExecSpace& exec, const Out<ExecSpace>& out, const Out<ExecSpace>& lse,
                       const In<ExecSpace>& qkv, const AttentionForwardOptions& options = {}) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  attention_forward(ctx, out, lse, qkv, options);
}
template <class ExecSpace>
void attention_forward(const ExecSpace& exec, BufferRef out, float* lse, ConstBufferRef qkv,
                       index_t B, index_t T, index_t C, index_t NH,
                       const AttentionForwardOptions& options = {}) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  attention_forward(ctx, out, lse, qkv, B, T, C, NH, options);
}

}  // namespace llmk
