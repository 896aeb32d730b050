// llmk: GPT-2's encoder (llm.c's encoder_forward), the token and position
// embeddings that llmk::encoder_backward differentiates:
//
//   out[b, t, :] ⟵ wte[tokens[b, t], :] + wpe[t, :]
//
// out (B × T × C), tokens (B × T, int32), wte (V × C), wpe (T × C: a model
// with room for more positions passes the first T rows of its wpe). The sum
// in float, out rounded once. "⟵" is = by default, as every llmk forward
// output (out is written, never read: it may hold NaN), or += with
// options.out_update = Update::accumulate. Deterministic: each element on
// its own.
//
// A token outside [0, V) is refused (std::invalid_argument naming 'tokens',
// its position and value) with out unwritten: the device finds it and the
// host waits for that verdict before the embeddings are launched.
// options.check_tokens = false skips the check and the wait: the caller
// vouches for the tokens, and a token outside [0, V) makes its row of out
// NaN (no memory outside wte is read). Otherwise the contract is every llmk
// operation's (llmk/matmul_backward.hpp).
//
// Element types, one of these configurations:
//   "fp32"  wte, wpe, out float
//   "bf16"  wte, wpe, out bf16 (llm.c's training)
#pragma once

#include <llmk/context.hpp>
#include <llmk/encoder_backward.hpp>  // TokensView
#include <llmk/operation.hpp>
#include <llmk/tensor_ref.hpp>
#include <llmk/types.hpp>

#include <string>
#include <string_view>

namespace llmk {

struct EncoderForwardOptions {
  // An implementation's name (llmk::impls<llmk::EncoderForward>()), or "auto".
  std::string impl = "auto";
  Update out_update = Update::overwrite;
  // Whether the call checks the tokens (and waits for the device to say).
  bool check_tokens = true;
};

// The operation as llmk's generic queries name it: impls<EncoderForward>(),
// available<EncoderForward, Space>(impl), ... (llmk/operation.hpp).
struct EncoderForward {
  using Options = EncoderForwardOptions;
  using ImplInfo = llmk::ImplInfo;
};
extern template struct OpQueries<EncoderForward>;  // instantiated in the library

// Bytes of workspace a call needs (Context::use_workspace): 0.
template <class ExecSpace>
std::size_t encoder_forward_workspace_bytes(index_t B, index_t T, index_t C, index_t V,
                                            const EncoderForwardOptions& options = {},
                                            std::string_view precision = "fp32");

// Views: out (B, T, C), tokens (B, T), wte (V, C), wpe (T, C). V is wte's
// first extent.
template <class ExecSpace>
void encoder_forward(Context<ExecSpace>& ctx, const Out<ExecSpace>& out,
                     const TokensView<typename detail::NoDeduce<ExecSpace>::type>& tokens,
                     const In<ExecSpace>& wte, const In<ExecSpace>& wpe,
                     const EncoderForwardOptions& options = {});

// Raw pointers in ExecSpace's memory, row-major as llm.c's buffers: out
// B·T·C, tokens B·T, wte V·C, wpe T·C elements.
template <class ExecSpace>
void encoder_forward(Context<ExecSpace>& ctx, BufferRef out, const int* tokens,
                     ConstBufferRef wte, ConstBufferRef wpe, index_t B, index_t T, index_t C,
                     index_t V, const EncoderForwardOptions& options = {});

// The same two on an execution-space instance, with its implicit context.
template <class ExecSpace>
void encoder_forward(const ExecSpace& exec, const Out<ExecSpace>& out,
                     const TokensView<typename detail::NoDeduce<ExecSpace>::type>& tokens,
                     const In<ExecSpace>& wte, const In<ExecSpace>& wpe,
                     const EncoderForwardOptions& options = {}) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  encoder_forward(ctx, out, tokens, wte, wpe, options);
}
template <class ExecSpace>
void encoder_forward(const ExecSpace& exec, BufferRef out, const int* tokens, ConstBufferRef wte,
                     ConstBufferRef wpe, index_t B, index_t T, index_t C, index_t V,
                     const EncoderForwardOptions& options = {}) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  encoder_forward(ctx, out, tokens, wte, wpe, B, T, C, V, options);
}

}  // namespace llmk
