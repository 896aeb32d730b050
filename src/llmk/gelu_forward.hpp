// llmk: GPT-2's GELU (the tanh approximation), the forward pass that
// llmk::gelu_backward differentiates:
//
//   out (N) ⟵ gelu(inp),   gelu(x) = ½·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))
//
// elementwise over any number of elements N: views M × C (rank 2) or
// B × T × C (rank 3), or flat through raw pointers and N (or an (N, 1) view),
// as llm.c's gelu_forward (B·T·4C elements of the MLP). In float, a bf16 out
// rounded once.
// "⟵" is = by default, as every llmk forward output (an activation is
// written, never read: out may hold NaN), or += (options.out_update =
// Update::accumulate). Deterministic: each element on its own.
//
// The contract is every llmk operation's (llmk/matmul_backward.hpp): a call
// either completes or throws before it touches any output
// (std::invalid_argument naming the argument for bad input,
// std::runtime_error for a call that cannot run), contexts, threads and
// streams alike. out may be inp itself (the same array: address, extents and
// type), GELU in place; any other overlap is refused.
//
// Element types, one of these configurations:
//   "fp32"  inp, out float
//   "bf16"  inp, out bf16 (llm.c's training)
#pragma once

#include <llmk/context.hpp>
#include <llmk/operation.hpp>
#include <llmk/tensor_ref.hpp>
#include <llmk/types.hpp>

#include <string>
#include <string_view>

namespace llmk {

struct GeluForwardOptions {
  // An implementation's name (llmk::impls<llmk::GeluForward>()), or "auto".
  std::string impl = "auto";
  Update out_update = Update::overwrite;
};

// The operation as llmk's generic queries name it: impls<GeluForward>(),
// available<GeluForward, Space>(impl), ... (llmk/operation.hpp).
struct GeluForward {
  using Options = GeluForwardOptions;
  using ImplInfo = llmk::ImplInfo;
};
extern template struct OpQueries<GeluForward>;  // instantiated in the library

// Bytes of workspace a call of N elements needs (Context::use_workspace): 0.
template <class ExecSpace>
std::size_t gelu_forward_workspace_bytes(index_t N, const GeluForwardOptions& options = {},
                                         std::string_view precision = "fp32");

// Views (or TensorRefs): out and inp of one shape, rank 2 (M, C) or 3
// (B, T, C), dense.
template <class ExecSpace>
void gelu_forward(Context<ExecSpace>& ctx, const Out<ExecSpace>& out, const In<ExecSpace>& inp,
                  const GeluForwardOptions& options = {});

// Raw pointers in ExecSpace's memory: N elements each (messages give their
// extents as (N, 1)).
template <class ExecSpace>
void gelu_forward(Context<ExecSpace>& ctx, BufferRef out, ConstBufferRef inp, index_t N,
                  const GeluForwardOptions& options = {});

// The same two on an execution-space instance, with its implicit context.
template <class ExecSpace>
void gelu_forward(const ExecSpace& exec, const Out<ExecSpace>& out, const In<ExecSpace>& inp,
                  const GeluForwardOptions& options = {}) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  gelu_forward(ctx, out, inp, options);
}
template <class ExecSpace>
void gelu_forward(const ExecSpace& exec, BufferRef out, ConstBufferRef inp, index_t N,
                  const GeluForwardOptions& options = {}) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  gelu_forward(ctx, out, inp, N, options);
}

}  // namespace llmk
