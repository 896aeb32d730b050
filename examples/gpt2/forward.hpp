// GPT-2's forward pass on the device, composed from llmk's forward
// operations (encoder_forward, layernorm_forward, matmul_forward with GELU
// fused, attention_forward, residual_forward) in the order of llm.c's
// gpt2_forward (train_gpt2.cu): every activation the backward reads
// (ActivationTensors of the recompute variant: lse, not att) and the logits,
// from the parameters and the tokens. No host sync, no allocation: the
// caller's context holds a workspace of at least forward_workspace_bytes.
#pragma once

#include "device.hpp"
#include "model.hpp"
#include "tensors.hpp"

#include <llmk/context.hpp>

#include <cstddef>

namespace gpt2 {

// llmk's workspace the forward's calls need at most (its matmuls').
template <class ExecSpace, class T>
std::size_t forward_workspace_bytes(const Config& cfg);

// acts ⟵ the forward of `params` over `tokens` (B·T, checked by the
// caller: the encoder's own check, a wait for the device, is skipped);
// scratch holds B·T·C elements (the projections before their residual sums).
template <class ExecSpace, class T>
void gpt2_forward(llmk::Context<ExecSpace>& ctx, const Config& cfg,
                  const ParameterTensors<ExecSpace, T>& params, ActivationTensors<ExecSpace, T>& acts,
                  const Buffer<ExecSpace, int>& tokens, const Buffer<ExecSpace, T>& scratch);

}  // namespace gpt2
