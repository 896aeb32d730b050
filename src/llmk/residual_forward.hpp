// llmk: GPT-2's residual connection (llm.c's residual_forward), the sum of
// the residual stream and a block's output:
//
//   out (N) ⟵ inp1 + inp2
//
// elementwise over any number of elements N: views M × C (rank 2) or
// B × T × C (rank 3), or flat through raw pointers and N, as llm.c's
// residual_forward (B·T·C elements). The sum in float, a bf16 out rounded
// once. "⟵" is = by default, as every llmk forward output (out is written,
// never read: it may hold NaN), or += (options.out_update =
// Update::accumulate). Deterministic: each element on its own.
//
// out may be inp1 itself (the same array: address, extents and type), the
// residual stream updated in place (x += f(x)); any other overlap is
// refused. The backward of the sum needs no operation of its own: its
// gradient is dout for both inputs. Otherwise the contract is every llmk
// operation's (llmk/matmul_backward.hpp).
//
// Element types, one of these configurations:
//   "fp32"  inp1, inp2, out float
//   "bf16"  inp1, inp2, out bf16 (llm.c's training)
#pragma once

#include <llmk/context.hpp>
#include <llmk/operation.hpp>
#include <llmk/tensor_ref.hpp>
#include <llmk/types.hpp>

#include <string>
#include <string_view>

namespace llmk {

struct ResidualForwardOptions {
  // An implementation's name (llmk::impls<llmk::ResidualForward>()), or "auto".
  std::string impl = "auto";
  Update out_update = Update::overwrite;
};

// The operation as llmk's generic queries name it: impls<ResidualForward>(),
// available<ResidualForward, Space>(impl), ... (llmk/operation.hpp).
struct ResidualForward {
  using Options = ResidualForwardOptions;
  using ImplInfo = llmk::ImplInfo;
};
extern template struct OpQueries<ResidualForward>;  // instantiated in the library

// Bytes of workspace a call of N elements needs (Context::use_workspace): 0.
template <class ExecSpace>
std::size_t residual_forward_workspace_bytes(index_t N, const ResidualForwardOptions& options = {},
                                             std::string_view precision = "fp32");

// Views (or TensorRefs): out, inp1 and inp2 of one shape, rank 2 (M, C) or 3
// (B, T, C), dense.
template <class ExecSpace>
void residual_forward(Context<ExecSpace>& ctx, const Out<ExecSpace>& out,
                      const In<ExecSpace>& inp1, const In<ExecSpace>& inp2,
                      const ResidualForwardOptions& options = {});

// Raw pointers in ExecSpace's memory: N elements each (messages give their
// extents as (N, 1)).
template <class ExecSpace>
void residual_forward(Context<ExecSpace>& ctx, BufferRef out, ConstBufferRef inp1,
                      ConstBufferRef inp2, index_t N, const ResidualForwardOptions& options = {});

// The same two on an execution-space instance, with its implicit context.
template <class ExecSpace>
void residual_forward(const ExecSpace& exec, const Out<ExecSpace>& out, const In<ExecSpace>& inp1,
                      const In<ExecSpace>& inp2, const ResidualForwardOptions& options = {}) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  residual_forward(ctx, out, inp1, inp2, options);
}
template <class ExecSpace>
void residual_forward(const ExecSpace& exec, BufferRef out, ConstBufferRef inp1,
                      ConstBufferRef inp2, index_t N, const ResidualForwardOptions& options = {}) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  residual_forward(ctx, out, inp1, inp2, N, options);
}

}  // namespace llmk
