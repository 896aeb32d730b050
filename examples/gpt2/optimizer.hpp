// GPT-2's optimizer step on the device, from llmk's calls: the global
// gradient norm (llmk::squared_norm over the 16 gradients, summed into one
// float), clipping to grad_clip (llm.c's rule: the gradients scaled by
// grad_clip / norm when the norm is larger), and llmk::adamw on each
// parameter tensor, with weight decay on the matrices only (wte, wpe, qkvw,
// attprojw, fcw, fcprojw: PyTorch's parameter groups in llm.c's
// train_gpt2.py, and llm.c's own). bf16 parameters get fp32 master weights;
// AdamW's m and v are float.
#pragma once

#include "device.hpp"
#include "model.hpp"
#include "tensors.hpp"

#include <llmk/context.hpp>

#include <map>
#include <string>

namespace gpt2 {

struct OptimizerSettings {
  float beta1 = 0.9f, beta2 = 0.95f, eps = 1e-8f;
  float weight_decay = 0.0f;  // on the matrices
  float grad_clip = 1.0f;     // ≤ 0: no clipping
};

// Whether a parameter decays (a matrix).
bool decays(const std::string& name);

template <class ExecSpace, class T>
class Optimizer {
 public:
  // m and v zero; master weights (bf16 T) from `weights`, the parameters'
  // float values before their rounding (parameter_specs' names).
  Optimizer(const Config& cfg, const OptimizerSettings& settings, const Floats& weights);

  // The global L2 norm of the gradients (waits for the device: the host
  // needs it for the clipping factor, as llm.c's step does).
  float grad_norm(llmk::Context<ExecSpace>& ctx, ParameterTensors<ExecSpace, float>& grads);
  // One AdamW step t (from 1) at learning rate lr, the gradients clipped by
  // their norm (grad_norm's).
  void step(llmk::Context<ExecSpace>& ctx, ParameterTensors<ExecSpace, T>& params,
            ParameterTensors<ExecSpace, float>& grads, float lr, std::int64_t t, float norm);
  // The weights: the master weights where there are, else the parameters.
  Floats weights(ParameterTensors<ExecSpace, T>& params) const;

 private:
  OptimizerSettings settings_;
  std::map<std::string, Buffer<ExecSpace, float>> m_, v_, master_;
  Buffer<ExecSpace, float> norm_squared_;
};

}  // namespace gpt2
