// GPT-2's backward pass on the device, composed from llmk's public API
// (classifier_backward, matmul_backward, layernorm_backward,
// attention_backward[_recompute], encoder_backward) in the order of llm.c's
// gpt2_backward (train_gpt2.cu).
//
// Buffers are allocated once (constructor), llmk's workspace too (one buffer
// handed to the Context, sized by the *_workspace_bytes queries), so that
// run() only enqueues kernels on the execution-space instance: no host sync,
// no allocation (unless a StepClock asks to fence after each step).
//
// Precisions: T = float ("fp32": everything float) or llmk::bf16 (activations,
// weights and activation gradients bf16; parameter gradients float: llmk's
// "bf16-fp32grad" for matmul and layernorm, "bf16" for attention).
#pragma once

#include "device.hpp"
#include "model.hpp"
#include "tensors.hpp"

#include <llmk/attention_backward.hpp>
#include <llmk/classifier_backward.hpp>
#include <llmk/context.hpp>
#include <llmk/encoder_backward.hpp>
#include <llmk/gradient_reducer.hpp>
#include <llmk/layernorm_backward.hpp>
#include <llmk/matmul_backward.hpp>

#include <array>
#include <string>

namespace gpt2 {

// The backward's steps, for the time per operation.
enum class Step { classifier, lm_head, layernorm, fcproj_gelu, fc, attproj, attention, qkv, encoder };
constexpr int kSteps = 9;
const char* step_name(Step s);

// Seconds per step, fencing after each (a separate, slower run than the
// timed one: the fences serialize what the device could overlap). With
// `alone` set, run() makes only that step's calls: the step without the
// other operations between its calls (on a host, without another library's
// threads still spinning when it starts: timing.hpp's thread-collapse check).
struct StepClock {
  std::array<double, kSteps> seconds{};
  Kokkos::Timer timer;
  int alone = -1;  // a Step, or -1: every step
  bool runs(Step s) const { return alone < 0 || alone == int(s); }
  template <class ExecSpace>
  void lap(const ExecSpace& exec, Step s) {
    exec.fence();
    seconds[int(s)] += timer.seconds();
    timer.reset();
  }
};

template <class ExecSpace, class T>
class Gpt2Backward {
 public:
  Gpt2Backward(const ExecSpace& exec, const Config& cfg, bool materialized, Impls impls = {});

  // Copies the inputs to the device (converted to T), checked first.
  void load(const HostInputs& in);
  // Restores what run() consumed (the logits, which the classifier turns into
  // their gradient in place). Not part of the backward's time.
  void reset();
  // llmk's own forward (forward.hpp) over the loaded parameters and tokens:
  // every activation recomputed, the logits saved for reset() unless
  // keep_logits is false (the trainer: run() may consume them). The
  // recompute variant only (the forward saves lse, not att).
  void forward(bool keep_logits = true);

  // The trainer's (train.hpp) access: the parameters alone (parameter_specs'
  // names and sizes; checked), a batch's tokens and targets (B·T each, in
  // [0, V): checked), the device's parameters and their gradients, the
  // context its calls use.
  void load_parameters(const Floats& params);
  void load_batch(const std::vector<std::int32_t>& tokens, const std::vector<std::int32_t>& targets);
  ParameterTensors<ExecSpace, T>& parameters() { return params_; }
  ParameterTensors<ExecSpace, float>& parameter_gradients() { return grads_; }
  llmk::Context<ExecSpace>& context() { return ctx_; }
  const Config& config() const { return cfg_; }
  // The activations (activation_specs' names), after a fence.
  Doubles activations() const;
  // The backward pass, enqueued on the instance; with a clock, fenced and
  // timed after each step.
  void run(StepClock* clock = nullptr);
  // The gradients (gradient_specs' names), after a fence.
  Doubles gradients() const;
  // The classifier's losses (B, T), after a fence; their mean.
  std::vector<double> losses() const;
  double mean_loss() const;
  // The loaded batch's mean loss: the forward and classifier_forward (a
  // validation batch's; no backward), after a fence.
  double evaluate();

  const ExecSpace& exec() const { return exec_; }

  // Data parallelism (data_parallel.hpp). The loss is the mean over
  // `positions` positions: the global batch's B·T (default: this rank's).
  void set_loss_positions(index_t positions) { loss_positions_ = positions; }
  // From now on run() ends with the parameter gradients summed across the
  // reducer's ranks: bucket by bucket as the backward finishes them
  // (overlap: lnf's, then each layer's from the last, then wte's and wpe's),
  // or all after it; then reducer->wait(). A fresh reducer gets the buckets
  // registered (collective); null: no reduction.
  void reduce_gradients(llmk::GradientReducer<ExecSpace>* reducer, bool overlap);

 private:
  void lap(StepClock* clock, Step s) {
    if (clock) clock->lap(exec_, s);
  }
  void save_logits();
  void classifier();  // losses and dlogits (in place of the logits)
  static bool runs(const StepClock* clock, Step s) { return !clock || clock->runs(s); }
  void bucket_done(int bucket) {
    if (reducer_ && overlap_) reducer_->ready(bucket);
  }

  ExecSpace exec_;
  Config cfg_;
  bool materialized_;
  Impls impls_;
  index_t loss_positions_;
  llmk::GradientReducer<ExecSpace>* reducer_ = nullptr;
  bool overlap_ = true;
  llmk::Context<ExecSpace> ctx_;
  Buffer<ExecSpace, char> workspace_;
  ParameterTensors<ExecSpace, T> params_;
  ParameterTensors<ExecSpace, float> grads_;
  ActivationTensors<ExecSpace, T> acts_;
  Buffer<ExecSpace, T> logits_saved_;
  Buffer<ExecSpace, int> tokens_, targets_;
  Buffer<ExecSpace, float> losses_;
  // Activation gradients, as llm.c's: the residual stream's (B, T, C) and two
  // scratch buffers, (B, T, C) and (B, T, 4C).
  Buffer<ExecSpace, T> dresidual_, dl_btc_, dl_bt4c_;
};

}  // namespace gpt2
