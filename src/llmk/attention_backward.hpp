// llmk: the backward pass of GPT-2's causal self-attention, given the
// forward's probabilities.
//
// Forward, for reference: qkv (B, T, 3C) holds q, k, v side by side along
// its last extent ([0, C), [C, 2C), [2C, 3C)), each viewed as NH heads of
// HS = C / NH channels (head h: channels [h·HS, (h+1)·HS)). Per (b, h):
//   preatt = q·kᵀ / √HS, with the causal mask (key t' > query t is −∞)
//   att    = softmax(preatt) per row                      (B, NH, T, T)
//   out    = att·v, the heads merged back to (B, T, C)
//
// Backward (this call): given dout (B, T, C), qkv and att, per (b, h), with
// α = 1/√HS and only the causal part (t' ≤ t) of the T × T matrices:
//   dv      = attᵀ · dout_h
//   datt    = dout_h · vᵀ
//   dpreatt = att ⊙ (datt − rowsum(datt ⊙ att))
//   dq      = α · dpreatt · k
//   dk      = α · dpreattᵀ · q
// written into dqkv (B, T, 3C) in qkv's layout (dq, dk, dv side by side).
//
// dqkv accumulates (+=) by default, as every llmk output does (docs/api.md);
// options.dqkv_update = Update::overwrite writes it (=) and never reads it (it
// may hold NaN): llm.c's backward, where qkv's gradient is a fresh buffer.
//
// att's strictly upper triangle (t' > t, the masked keys) is never read: it
// may hold anything, NaN included (llm.c's forward writes zeros there, its
// CUDA softmax leaves it as it was).
//
// Element types, one of these configurations (llmk::bf16: bf16.hpp):
//   "fp32"  everything float
//   "bf16"  dout, qkv, att and dqkv bf16 (llm.c's training)
// Sums accumulate in float. "materialized" and "naive" keep datt and dpreatt
// float whatever the inputs and round each element of dqkv once into its
// type; "cublas" (Cuda) rounds datt and dpreatt to bf16 in "bf16" (cuBLAS's
// bf16 products take two bf16 inputs; llm.c's keeps them in bf16 too). options.math = Math::tf32:
// "fp32" arrays with TF32 products ("cublas" only).
//
// NaN and Inf in an input reach at least the elements of dqkv that depend on
// it through the causal part; an implementation that multiplies the masked
// part's zeros (a dense GEMM over T) may carry them further within the same
// (b, h) and channel (0 · NaN is NaN). Finite inputs give the same results
// either way.
//
// Deterministic where an implementation's info says so (all of llmk's): no
// float atomics, every sum in a fixed order.
//
// The contract is matmul_backward's (llmk/matmul_backward.hpp): a call either
// completes or throws before it touches any output (std::invalid_argument
// naming the argument for bad input, std::runtime_error for a call that cannot
// run), contexts, threads and streams alike. Zero-sized B, T or C are valid
// no-ops; NH must be ≥ 1 and divide C.
//
// The RECOMPUTE variant (attention_backward_recompute, below), flash-
// attention's backward, never holds T × T: in place of att it takes the
// forward's output out (B, T, C) and per-row log-sum-exp lse (B, NH, T),
// float in every configuration,
//   lse[b, h, t] = log Σ_{t' ≤ t} exp(α q_t · k_t')
// and recomputes the probabilities a tile at a time, per (b, h):
//   P  = exp(α q·kᵀ − lse)                    (row-wise, causal part only)
//   D  = rowsum(dout_h ⊙ out_h)               (= rowsum(datt ⊙ att))
//   dv = Pᵀ·dout_h,  dP = dout_h·vᵀ,  dS = P ⊙ (dP − D),
//   dq = α dS·k,     dk = α dSᵀ·q
// the same gradients as above (dpreatt = dS), with workspace O(B·NH·T) (D)
// instead of O(B·NH·T·T). Its sums run over the causal terms only, so a NaN
// reaches exactly the elements of dqkv that depend on it causally. Options,
// overwrite default, precisions ("fp32"; "bf16": dout, qkv, out, dqkv bf16,
// lse float), determinism and the contract are those above.
#pragma once

#include <llmk/context.hpp>
#include <llmk/operation.hpp>
#include <llmk/tensor_ref.hpp>
#include <llmk/types.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace llmk {

struct AttentionBackwardOptions {
  // An implementation's name (llmk::impls<llmk::AttentionBackward>()), or "auto".
  std::string impl = "auto";
  Math math = Math::fp32;
  // dqkv += the gradient; Update::overwrite: dqkv = the gradient, never read.
  Update dqkv_update = Update::accumulate;
};

using AttentionBackwardImplInfo = ImplInfo;

// The operation as llmk's generic queries name it: impls<AttentionBackward>(),
// available<AttentionBackward, Space>(impl), ... (llmk/operation.hpp). Precisions:
// "fp32", "bf16".
struct AttentionBackward {
  using Options = AttentionBackwardOptions;
  using ImplInfo = AttentionBackwardImplInfo;
};
extern template struct OpQueries<AttentionBackward>;  // instantiated in the library

// Bytes of workspace a call with these sizes needs (Context::use_workspace).
// "materialized" holds B·NH·T·T floats (datt, then dpreatt); "cublas"
// two B·NH·T·T arrays of the inputs' type (8 bytes per element in fp32, 4
// in bf16) and its GEMMs' pointer arrays (B > 1: 96 bytes per head and
// block of query rows, at most 4 blocks in fp32, 2 in bf16).
template <class ExecSpace>
std::size_t attention_backward_workspace_bytes(index_t B, index_t T, index_t C, index_t NH,
                                               const AttentionBackwardOptions& options = {},
                                               std::string_view precision = "fp32");

// Views (or TensorRefs): dqkv and qkv of rank 3 (B, T, 3C) or rank 2
// (B·T, 3C), dout (B, T, C) or (B·T, C) with the same rank; att of rank 4,
// (B, NH, T, T), which gives B, NH and T (a rank-2 call's rows are B·T).
template <class ExecSpace>
void attention_backward(Context<ExecSpace>& ctx, const Out<ExecSpace>& dqkv,
                        const In<ExecSpace>& dout, const In<ExecSpace>& qkv,
                        const In<ExecSpace>& att, const AttentionBackwardOptions& options = {});

// Raw pointers in ExecSpace's memory, row-major as llm.c's buffers: dqkv and
// qkv B·T·3C elements, dout B·T·C, att B·NH·T·T.
template <class ExecSpace>
void attention_backward(Context<ExecSpace>& ctx, BufferRef dqkv, ConstBufferRef dout,
                        ConstBufferRef qkv, ConstBufferRef att, index_t B, index_t T, index_t C,
                        index_t NH, const AttentionBackwardOptions& options = {});

// The same two on an execution-space instance, with its implicit context.
template <class ExecSpace>
void attention_backward(const ExecSpace& exec, const Out<ExecSpace>& dqkv,
                        const In<ExecSpace>& dout, const In<ExecSpace>& qkv,
                        const In<ExecSpace>& att, const AttentionBackwardOptions& options = {}) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  attention_backward(ctx, dqkv, dout, qkv, att, options);
}
template <class ExecSpace>
void attention_backward(const ExecSpace& exec, BufferRef dqkv, ConstBufferRef dout,
                        ConstBufferRef qkv, ConstBufferRef att, index_t B, index_t T, index_t C,
                        index_t NH, const AttentionBackwardOptions& options = {}) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  attention_backward(ctx, dqkv, dout, qkv, att, B, T, C, NH, options);
}

// --- the recompute variant ------------------------------------------------------

// The operation as llmk's generic queries name it: impls<AttentionBackwardRecompute>(),
// available<AttentionBackwardRecompute, Space>(impl), ... (llmk/operation.hpp).
struct AttentionBackwardRecompute {
  using Options = AttentionBackwardOptions;
  using ImplInfo = AttentionBackwardImplInfo;
};
extern template struct OpQueries<AttentionBackwardRecompute>;  // instantiated in the library

// Its workspace, as the query above: D, B·NH·T floats.
template <class ExecSpace>
std::size_t attention_backward_recompute_workspace_bytes(
    index_t B, index_t T, index_t C, index_t NH, const AttentionBackwardOptions& options = {},
    std::string_view precision = "fp32");

// Views (or TensorRefs): dqkv and qkv of rank 3 (B, T, 3C) or rank 2
// (B·T, 3C), dout and out (B, T, C) or (B·T, C) with the same rank; lse of
// rank 3, (B, NH, T), float, which gives B, NH and T.
template <class ExecSpace>
void attention_backward_recompute(Context<ExecSpace>& ctx, const Out<ExecSpace>& dqkv,
                                  const In<ExecSpace>& dout, const In<ExecSpace>& qkv,
                                  const In<ExecSpace>& out, const In<ExecSpace>& lse,
                                  const AttentionBackwardOptions& options = {});

// Raw pointers in ExecSpace's memory, row-major as llm.c's buffers: dqkv and
// qkv B·T·3C elements, dout and out B·T·C, lse B·NH·T floats.
template <class ExecSpace>
void attention_backward_recompute(Context<ExecSpace>& ctx, BufferRef dqkv, ConstBufferRef dout,
                                  ConstBufferRef qkv, ConstBufferRef out, const float* lse,
                                  index_t B, index_t T, index_t C, index_t NH,
                                  const AttentionBackwardOptions& options = {});

// The same two on an execution-space instance, with its implicit context.
template <class ExecSpace>
void attention_backward_recompute(const ExecSpace& exec, const Out<ExecSpace>& dqkv,
                                  const In<ExecSpace>& dout, const In<ExecSpace>& qkv,
                                  const In<ExecSpace>& out, const In<ExecSpace>& lse,
                                  const AttentionBackwardOptions& options = {}) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  attention_backward_recompute(ctx, dqkv, dout, qkv, out, lse, options);
}
template <class ExecSpace>
void attention_backward_recompute(const ExecSpace& exec, BufferRef dqkv, ConstBufferRef dout,
                                  ConstBufferRef qkv, ConstBufferRef out, const float* lse,
                                  index_t B, index_t T, index_t C, index_t NH,
                                  const AttentionBackwardOptions& options = {}) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  attention_backward_recompute(ctx, dqkv, dout, qkv, out, lse, B, T, C, NH, options);
}

}  // namespace llmk
