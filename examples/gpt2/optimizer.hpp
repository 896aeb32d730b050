// GPT-2's optimizer step on the device, from llmk's calls, with no wait for
// the host: the global gradient norm (one llmk::squared_norm over all the
// gradients, which are one allocation: parameter_layout), clipping to
// grad_clip by llm.c's rule (the gradients scaled by grad_clip / norm when
// the norm is larger: adamw reads the norm from device memory), and
// llmk::adamw once per parameter group: the matrices with weight decay, the
// rest (biases, layer norms) without. bf16 parameters get fp32 master
// weights; AdamW's m and v are float.
#pragma once

#include "device.hpp"
#include "model.hpp"
#include "tensors.hpp"

#include <llmk/context.hpp>

#include <string>

namespace gpt2 {

struct OptimizerSettings {
  float beta1 = 0.9f, beta2 = 0.95f, eps = 1e-8f;
  float weight_decay = 0.0f;  // on the matrices
  float grad_clip = 1.0f;     // ≤ 0: no clipping
};

template <class ExecSpace, class T>
class Optimizer {
 public:
  // m and v zero; master weights (bf16 T) from `weights`, the parameters'
  // float values before their rounding (parameter_specs' names).
  Optimizer(const Config& cfg, const OptimizerSettings& settings, const Floats& weights);

  // One AdamW step t (from 1) at learning rate lr, the gradients clipped by
  // their global norm; three launches, queued on ctx without waiting.
  void step(llmk::Context<ExecSpace>& ctx, ParameterTensors<ExecSpace, T>& params,
            ParameterTensors<ExecSpace, float>& grads, float lr, std::int64_t t);
  // The last step's gradient norm, before clipping (waits for it).
  float grad_norm(llmk::Context<ExecSpace>& ctx) const;
  // The weights: the master weights where there are, else the parameters.
  Floats weights(ParameterTensors<ExecSpace, T>& params) const;

 private:
  Config cfg_;
  ParameterLayout layout_;
  OptimizerSettings settings_;
  Buffer<ExecSpace, float> m_, v_, master_;  // parameter_layout's order
  Buffer<ExecSpace, float> norm_squared_;
};

}  // namespace gpt2
