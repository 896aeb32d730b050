// llmk: the AdamW optimizer's step (Loshchilov & Hutter; llm.c's
// adamw_kernel3, PyTorch's torch.optim.AdamW), for each of N parameters:
//
//   g      = grad_scale · clip · grads         (gradient clipping's factors)
//   m      ⟵ beta1 · m + (1 − beta1) · g
//   v      ⟵ beta2 · v + (1 − beta2) · g²
//   p      = master where given, else params  (the fp32 master weights)
//   p      ⟵ p − lr · ( m / (1 − beta1^t) / (√(v / (1 − beta2^t)) + eps) + weight_decay · p )
//   params ⟵ p (a bf16 params rounded once);  master ⟵ p where given
//
// params, m, v and master are read and written in place (inout: each call
// continues the optimizer's state); grads is only read. Every element on its
// own, in float: deterministic, the same bits on every thread count and
// launch. The step t ≥ 1 counts the calls (bias corrections in double on the
// host). Weight decay applies to what it is given: call once for the
// parameters that decay (GPT-2's matrices) and once with weight_decay = 0
// for the others (biases, layer norms), as llm.c and PyTorch's parameter
// groups do, or once over all of them.
//
// Arrays: N elements each, as views of rank 1 (N) or 2 (A, B), or raw
// pointers and N; m, v and master float; master absent (empty / nullptr):
// params are the weights themselves (a bf16 params then loses the updates
// smaller than its rounding, as llm.c without master weights). No array may
// overlap another.
//
// Element types, one of these configurations (m, v, master float in all):
//   "fp32"           params, grads float
//   "bf16"           params, grads bf16 (llm.c's training, with fp32 master weights)
//   "bf16-fp32grad"  params bf16, grads float (what the backward's
//                    "bf16-fp32grad" matmuls and layer norms leave)
//
// Clipping by a norm the host never reads: with grad_norm_squared (one float
// in ExecSpace's memory, e.g. llmk::squared_norm's output over all the
// gradients), clip = max_grad_norm / √(*grad_norm_squared) where that norm is
// larger than max_grad_norm, else 1 (llm.c's rule); without it, clip = 1 and
// grad_scale is the host's factor. The float is read by the kernel, so a
// training step needs no device-to-host wait between the norm and the update
// (PyTorch's clip_grad_norm_ keeps its norm on the device too).
//
// Hyperparameters are checked before anything is written: lr, weight_decay
// and grad_scale finite and ≥ 0, beta1 and beta2 in [0, 1), eps finite and
// > 0, t ≥ 1; with grad_norm_squared, max_grad_norm finite and > 0 and the
// float in memory ExecSpace reaches, apart from every array. Otherwise the contract is every llmk operation's
// (llmk/matmul_backward.hpp): a call either completes or throws before it
// touches any output.
#pragma once

#include <llmk/context.hpp>
#include <llmk/operation.hpp>
#include <llmk/tensor_ref.hpp>
#include <llmk/types.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace llmk {

// One step's hyperparameters (defaults: PyTorch's AdamW but betas, which are
// GPT-2's as llm.c trains it).
struct AdamWHyperparams {
  float lr = 3e-4f;
  float beta1 = 0.9f;
  float beta2 = 0.95f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;
  std::int64_t t = 1;       // this step's number, from 1
  float grad_scale = 1.0f;  // e.g. min(1, max_norm / ‖grads‖) for clipping
  // The gradients' squared norm on the device (nullptr: no clipping by it)
  // and the norm it is clipped to.
  const float* grad_norm_squared = nullptr;
  float max_grad_norm = 1.0f;
};

struct AdamWOptions {
  // An implementation's name (llmk::impls<llmk::AdamW>()), or "auto".
  std::string impl = "auto";
};

// The operation as llmk's generic queries name it: impls<AdamW>(),
// available<AdamW, Space>(impl), ... (llmk/operation.hpp).
struct AdamW {
  using Options = AdamWOptions;
  using ImplInfo = llmk::ImplInfo;
};
extern template struct OpQueries<AdamW>;  // instantiated in the library

// Bytes of workspace a call of N parameters needs (Context::use_workspace): 0.
template <class ExecSpace>
std::size_t adamw_workspace_bytes(index_t N, const AdamWOptions& options = {},
                                  std::string_view precision = "fp32");

// Views (or TensorRefs) of one shape, rank 1 (N) or 2 (A, B), dense; master
// empty: none.
template <class ExecSpace>
void adamw(Context<ExecSpace>& ctx, const Out<ExecSpace>& params, const In<ExecSpace>& grads,
           const Out<ExecSpace>& m, const Out<ExecSpace>& v, const Out<ExecSpace>& master,
           const AdamWHyperparams& hp, const AdamWOptions& options = {});

// Raw pointers in ExecSpace's memory, N elements each; master nullptr: none.
template <class ExecSpace>
void adamw(Context<ExecSpace>& ctx, BufferRef params, ConstBufferRef grads, float* m, float* v,
           float* master, index_t N, const AdamWHyperparams& hp, const AdamWOptions& options = {});

// The same two on an execution-space instance, with its implicit context.
template <class ExecSpace>
void adamw(const ExecSpace& exec, const Out<ExecSpace>& params, const In<ExecSpace>& grads,
           const Out<ExecSpace>& m, const Out<ExecSpace>& v, const Out<ExecSpace>& master,
           const AdamWHyperparams& hp, const AdamWOptions& options = {}) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  adamw(ctx, params, grads, m, v, master, hp, options);
}
template <class ExecSpace>
void adamw(const ExecSpace& exec, BufferRef params, ConstBufferRef grads, float* m, float* v,
           float* master, index_t N, const AdamWHyperparams& hp,
           const AdamWOptions& options = {}) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  adamw(ctx, params, grads, m, v, master, N, hp, options);
}

}  // namespace llmk
