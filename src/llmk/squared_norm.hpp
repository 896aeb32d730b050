// llmk: the sum of squares of N values, out ⟵ Σ inp², the squared global
// gradient norm that gradient clipping needs (llm.c's global_norm_squared,
// PyTorch's clip_grad_norm_):
//
//   hp.grad_norm_squared = out;  // over every gradient, then llmk::adamw
//   hp.max_grad_norm = max_norm;  // clips on the device, no host wait
//
// or on the host: norm = √(out copied back), hp.grad_scale = norm > max_norm
// ? max_norm / norm : 1.
//
// out is one float in ExecSpace's memory (the caller copies it to the host
// when it needs it: the call does not wait); "⟵" is = by default, or +=
// (options.out_update = Update::accumulate: the norm of several buffers,
// one call each). Deterministic: fixed chunks of the input summed in float,
// their sums added in double in a fixed order, one rounding into out; the
// same bits on every thread count and run. With N = 0 the sum is 0.
//
// Element types, one of these configurations (out float in both):
//   "fp32"  inp float
//   "bf16"  inp bf16 (llm.c's gradients)
//
// Otherwise the contract is every llmk operation's (llmk/matmul_backward.hpp):
// a call either completes or throws before it touches any output.
#pragma once

#include <llmk/context.hpp>
#include <llmk/operation.hpp>
#include <llmk/tensor_ref.hpp>
#include <llmk/types.hpp>

#include <string>
#include <string_view>

namespace llmk {

struct SquaredNormOptions {
  // An implementation's name (llmk::impls<llmk::SquaredNorm>()), or "auto".
  std::string impl = "auto";
  Update out_update = Update::overwrite;
};

// The operation as llmk's generic queries name it: impls<SquaredNorm>(), ...
// (llmk/operation.hpp).
struct SquaredNorm {
  using Options = SquaredNormOptions;
  using ImplInfo = llmk::ImplInfo;
};
extern template struct OpQueries<SquaredNorm>;  // instantiated in the library

// Bytes of workspace a call of N values needs (Context::use_workspace): a
// float per chunk of the input.
template <class ExecSpace>
std::size_t squared_norm_workspace_bytes(index_t N, const SquaredNormOptions& options = {},
                                         std::string_view precision = "fp32");

// Views (or TensorRefs): out (1) float; inp (N) or (A, B), dense.
template <class ExecSpace>
void squared_norm(Context<ExecSpace>& ctx, const Out<ExecSpace>& out, const In<ExecSpace>& inp,
                  const SquaredNormOptions& options = {});

// Raw pointers in ExecSpace's memory: out one float, inp N values.
template <class ExecSpace>
void squared_norm(Context<ExecSpace>& ctx, float* out, ConstBufferRef inp, index_t N,
                  const SquaredNormOptions& options = {});

// The same two on an execution-space instance, with its implicit context.
template <class ExecSpace>
void squared_norm(const ExecSpace& exec, const Out<ExecSpace>& out, const In<ExecSpace>& inp,
                  const SquaredNormOptions& options = {}) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  squared_norm(ctx, out, inp, options);
}
template <class ExecSpace>
void squared_norm(const ExecSpace& exec, float* out, ConstBufferRef inp, index_t N,
                  const SquaredNormOptions& options = {}) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  squared_norm(ctx, out, inp, N, options);
}

}  // namespace llmk
