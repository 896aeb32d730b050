// llmk: the backward pass of GPT-2's GELU (the tanh approximation), where it
// is not fused into a matmul's (llmk/matmul_backward.hpp's pre_gelu):
//
//   dinp (N) ⟵ gelu'(inp) ⊙ dout,   gelu(x) = ½·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))
//
// elementwise over any number of elements N: views M × C (rank 2) or
// B × T × C (rank 3), or flat through raw pointers and N (or an (N, 1) view). gelu' is the one
// matmul_backward fuses (src/kernels/gelu.hpp), in float.
// "⟵" is += by default, as every llmk gradient (the call adds its terms to
// the gradient the other paths wrote; llm.c's CPU gelu_backward adds too),
// or = (options.dinp_update = Update::overwrite, as llm.c's CUDA kernel; dinp
// is never read then).
//
// Element types, one of these configurations:
//   "fp32"  dout, inp, dinp float
//   "bf16"  dout, inp, dinp bf16 (llm.c's training)
// The math is float, a bf16 dinp rounded once (+=: once after the add).
// Deterministic: each element on its own.
//
// The residual stream's gradient needs no kernel of its own: GPT-2's
// residual x + f(x) passes the gradient of x + f(x) to x unchanged and adds
// f's backward to it, which is what llmk's outputs accumulated do. With
// dresidual holding the gradient of the block's output, call f's last
// backward with its dinp = dresidual and Update::accumulate (the default):
// matmul_backward's dinp (the attention projection's or the MLP's) and
// layernorm_backward's dinp add into it, as llm.c's residual backward does.
//
// The contract is matmul_backward's (llmk/matmul_backward.hpp): a call either
// completes or throws before it touches any output (std::invalid_argument
// naming the argument for bad input, std::runtime_error for a call that cannot
// run), contexts, threads and streams alike. dinp may be dout itself (the
// same array: address, extents and type), as llm.c's gelu_backward_inplace
// writes the gradient over dout; any other overlap of dinp with dout or inp
// is refused.
#pragma once

#include <llmk/context.hpp>
#include <llmk/operation.hpp>
#include <llmk/tensor_ref.hpp>
#include <llmk/types.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace llmk {

struct GeluBackwardOptions {
  // An implementation's name (llmk::impls<llmk::GeluBackward>()), or "auto".
  std::string impl = "auto";
  Update dinp_update = Update::accumulate;
};

using GeluBackwardImplInfo = ImplInfo;

// The operation as llmk's generic queries name it: impls<GeluBackward>(),
// available<GeluBackward, Space>(impl), ... (llmk/operation.hpp). Precisions:
// "fp32", "bf16".
struct GeluBackward {
  using Options = GeluBackwardOptions;
  using ImplInfo = GeluBackwardImplInfo;
};
extern template struct OpQueries<GeluBackward>;  // instantiated in the library

// Bytes of workspace a call of N elements needs (Context::use_workspace): 0.
template <class ExecSpace>
std::size_t gelu_backward_workspace_bytes(index_t N, const GeluBackwardOptions& options = {},
                                          std::string_view precision = "fp32");

// Views (or TensorRefs): dinp, dout, inp of one shape, rank 2 (M, C) or 3
// (B, T, C), dense.
template <class ExecSpace>
void gelu_backward(Context<ExecSpace>& ctx, const Out<ExecSpace>& dinp,
                   const In<ExecSpace>& dout, const In<ExecSpace>& inp,
                   const GeluBackwardOptions& options = {});

// Raw pointers in ExecSpace's memory: N elements each (llm.c's B·T·4C;
// messages give their extents as (N, 1)).
template <class ExecSpace>
void gelu_backward(Context<ExecSpace>& ctx, BufferRef dinp, ConstBufferRef dout,
                   ConstBufferRef inp, index_t N, const GeluBackwardOptions& options = {});

// The same two on an execution-space instance, with its implicit context.
template <class ExecSpace>
void gelu_backward(const ExecSpace& exec, const Out<ExecSpace>& dinp, const In<ExecSpace>& dout,
                   const In<ExecSpace>& inp, const GeluBackwardOptions& options = {}) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  gelu_backward(ctx, dinp, dout, inp, options);
}
template <class ExecSpace>
void gelu_backward(const ExecSpace& exec, BufferRef dinp, ConstBufferRef dout,
                   ConstBufferRef inp, index_t N, const GeluBackwardOptions& options = {}) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  gelu_backward(ctx, dinp, dout, inp, N, options);
}

}  // namespace llmk
