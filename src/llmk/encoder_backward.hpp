// llmk: the backward pass of GPT-2's encoder (llm.c's encoder_backward), the
// token and position embeddings out[b, t, :] = wte[tokens[b, t], :] + wpe[t, :]:
//
//   dwte (V × C) ⟵ Σ over the positions (b, t) holding token v of dout[b, t, :]
//   dwpe (T × C) ⟵ Σ_b dout[b, t, :]
//
// "⟵" is += by default (parameter gradients accumulate over micro-batches),
// or = per output (options.*_update = Update::overwrite; never read then):
// an overwritten dwte's rows of tokens absent from `tokens` become zeros.
//
// Element types, one of these configurations:
//   "fp32"           dout, dwte, dwpe float
//   "bf16"           all bf16 (llm.c's training)
//   "bf16-fp32grad"  dout bf16; dwte and dwpe float
// tokens are int32 in all. Sums in float, each output rounded once.
//
// Deterministic without floating-point atomics: each (token, channel) adds
// its positions' rows in increasing position order (b·T + t) in runs of
// encoder_backward_run (32) positions, then the runs' sums in order (a token
// at ≤ 32 positions: one run, the plain ordered sum); each (t, channel) adds
// its batch rows in order of b. Results are bitwise the same from run to
// run, on any space and thread count (ops/encoder_backward/kernels.hpp says how
// "sorted" sorts the positions by token on the device,
// ops/encoder_backward/block_sort.hpp how "block_sort" does on Cuda).
//
// A token outside [0, V) is refused (std::invalid_argument naming 'tokens',
// its position and value) with both outputs unwritten: the device finds
// it and the host waits for that verdict ("block_sort": a check launched
// first, which the launches after it obey on the device, so the host waits
// for the check alone while the sums run; "sorted": its sort's verdict,
// before the sums are launched). options.check_tokens = false skips the
// check and the wait. Otherwise the contract is matmul_backward's
// (llmk/matmul_backward.hpp).
#pragma once

#include <llmk/context.hpp>
#include <llmk/operation.hpp>
#include <llmk/tensor_ref.hpp>
#include <llmk/types.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace llmk {

struct EncoderBackwardOptions {
  // An implementation's name (llmk::impls<llmk::EncoderBackward>()), or "auto".
  std::string impl = "auto";
  Update dwte_update = Update::accumulate;
  Update dwpe_update = Update::accumulate;
  // Whether the call checks the tokens (and waits for the device to say).
  // false: the caller vouches that every token is in [0, V); the call then
  // never waits for the device (the sums' launches take a fixed number of
  // lanes that walk the counts the device found), and a token outside
  // [0, V) adds its row to no row of dwte (dwpe still gets it).
  bool check_tokens = true;
};

using EncoderBackwardImplInfo = ImplInfo;

// The positions of a token summed in order before their sum is added to the
// others' (the order above: part of the results' bits).
inline constexpr int encoder_backward_run = 32;

// The tokens of a call: B × T int32, row-major, in ExecSpace's memory.
template <class ExecSpace>
using TokensView = Kokkos::View<const int**, Kokkos::LayoutRight, typename ExecSpace::memory_space,
                                Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// The operation as llmk's generic queries name it: impls<EncoderBackward>(),
// available<EncoderBackward, Space>(impl), ... (llmk/operation.hpp). Precisions:
// "fp32", "bf16", "bf16-fp32grad".
struct EncoderBackward {
  using Options = EncoderBackwardOptions;
  using ImplInfo = EncoderBackwardImplInfo;
};
extern template struct OpQueries<EncoderBackward>;  // instantiated in the library

// Bytes of workspace a call needs (Context::use_workspace): the sort of the
// B·T positions by token ("sorted": 4·(3·V + 4·B·T + 4) bytes; "block_sort":
// 4·(V + 7·B·T + 2)), and the sums of the runs of the tokens at more than 32
// positions, 4·C·2·⌈B·T/32⌉ bytes, with alignment.
template <class ExecSpace>
std::size_t encoder_backward_workspace_bytes(index_t B, index_t T, index_t C, index_t V,
                                             const EncoderBackwardOptions& options = {},
                                             std::string_view precision = "fp32");

// Views: dwte (V, C), dwpe (T, C), dout (B, T, C), tokens (B, T). V is
// dwte's first extent. (A model with room for more positions, wpe of
// (maxT, C): pass the first T rows of its gradient.)
template <class ExecSpace>
void encoder_backward(Context<ExecSpace>& ctx, const Out<ExecSpace>& dwte,
                      const Out<ExecSpace>& dwpe, const In<ExecSpace>& dout,
                      const TokensView<typename detail::NoDeduce<ExecSpace>::type>& tokens,
                      const EncoderBackwardOptions& options = {});

// Raw pointers in ExecSpace's memory, row-major as llm.c's buffers: dwte V·C,
// dwpe T·C, dout B·T·C elements, tokens B·T.
template <class ExecSpace>
void encoder_backward(Context<ExecSpace>& ctx, BufferRef dwte, BufferRef dwpe,
                      ConstBufferRef dout, const int* tokens, index_t B, index_t T, index_t C,
                      index_t V, const EncoderBackwardOptions& options = {});

// The same two on an execution-space instance, with its implicit context.
template <class ExecSpace>
void encoder_backward(const ExecSpace& exec, const Out<ExecSpace>& dwte,
                      const Out<ExecSpace>& dwpe, const In<ExecSpace>& dout,
                      const TokensView<typename detail::NoDeduce<ExecSpace>::type>& tokens,
                      const EncoderBackwardOptions& options = {}) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  encoder_backward(ctx, dwte, dwpe, dout, tokens, options);
}
template <class ExecSpace>
void encoder_backward(const ExecSpace& exec, BufferRef dwte, BufferRef dwpe, ConstBufferRef dout,
                      const int* tokens, index_t B, index_t T, index_t C, index_t V,
                      const EncoderBackwardOptions& options = {}) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  encoder_backward(ctx, dwte, dwpe, dout, tokens, B, T, C, V, options);
}

}  // namespace llmk
