// GPT-2's training, llm.c's train_gpt2.cu loop from llmk's calls: the
// learning-rate schedule, the batches of a token file, random
// initialization, and a step (forward, loss, backward, gradient norm and
// clipping, AdamW) on the device. llmk-gpt2-train (train_main.cpp) drives it.
#pragma once

#include "backward.hpp"
#include "optimizer.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace gpt2 {

// llm.c's schedule: linear warmup over `warmup` steps to lr, then a cosine
// decay to lr · final_lr_frac (final_lr_frac 1: constant). This one reaches
// it at the last step (the ratio's denominator steps − warmup − 1); llm.c's
// divides by steps − warmup and stops one step short of it.
struct Schedule {
  float lr = 3e-4f;
  std::int64_t warmup = 0;
  float final_lr_frac = 1.0f;
  std::int64_t steps = 1;
  // The learning rate of step s (from 0).
  float at(std::int64_t s) const;
};

// llm.c's DataLoader: batch after batch of B·T tokens and their targets (the
// tokens one position on) from llm.c's token files, the files of a glob
// pattern one after the other in name order ("fineweb_train_*.bin"), one in
// memory at a time; a file with fewer than B·T + 1 tokens left moves to the
// next, and after the last back to the first.
class TokenStream {
 public:
  // Throws std::invalid_argument when the pattern matches no file, or (here
  // for the first file, on loading for the others) a file holds fewer than
  // B·T + 1 tokens or one outside [0, V); std::runtime_error for a bad file
  // (llmc_files.hpp). Each error names the file.
  TokenStream(const std::string& pattern, index_t B, index_t T, index_t V);
  void next(std::vector<std::int32_t>& inputs, std::vector<std::int32_t>& targets);
  // Back to the first batch of the first file.
  void rewind();
  const std::vector<std::string>& files() const { return files_; }

 private:
  void load(std::size_t file);

  std::vector<std::string> files_;
  std::size_t current_ = 0;
  std::vector<std::int32_t> tokens_;
  std::size_t batch_, position_ = 0;
  index_t V_;
};

// GPT-2's initialization (llm.c's and PyTorch's GPT-2): weights N(0, 0.02²),
// the residual projections' (attprojw, fcprojw) N(0, (0.02 / √(2L))²), biases
// 0, layer norms' weights 1; wte's padded rows 0. wpe has maxT rows.
Floats random_parameters(const Config& cfg, index_t maxT, std::uint64_t seed);

// A token sequence a model can learn, for runs without a corpus (the CPU
// tests, the GPU's comparison with PyTorch, which has no network): each
// token a fixed function of the one before (t → (31·t + 7) mod V), one in
// four replaced by a random token. Its best loss is ~ ¼ · ln V + 0.56 nats.
std::vector<std::int32_t> synthetic_tokens(index_t count, index_t V, std::uint64_t seed);

struct StepResult {
  double loss = 0;       // the batch's mean loss before the step
  float grad_norm = 0;   // the gradients' global norm, before clipping
  // Seconds of each phase, where the step was asked to fence after each
  // (Trainer::time_phases): the batch's upload and the forward, the
  // backward, the norm and AdamW.
  double forward_s = 0, backward_s = 0, optimizer_s = 0;
};

// The model on the device and its optimizer state: one step enqueues the
// forward, the backward and AdamW, waiting for the device twice (the
// gradient norm, then the losses).
template <class ExecSpace, class T>
class Trainer {
 public:
  // weights: parameter_specs(cfg)' names and sizes (wpe: cfg.T rows).
  Trainer(const ExecSpace& exec, const Config& cfg, const Floats& weights,
          const OptimizerSettings& settings, const Impls& impls = {});
  StepResult step(const std::vector<std::int32_t>& inputs,
                  const std::vector<std::int32_t>& targets, float lr);
  // A batch's mean loss, the parameters unchanged.
  double loss(const std::vector<std::int32_t>& inputs, const std::vector<std::int32_t>& targets);
  // The weights (the fp32 master weights of a bf16 model).
  Floats weights();
  // Whether each step fences after its phases to time them (StepResult).
  void time_phases(bool on) { time_phases_ = on; }
  std::int64_t steps_taken() const { return t_; }
  const ExecSpace& exec() const { return model_.exec(); }

 private:
  Gpt2Backward<ExecSpace, T> model_;
  Optimizer<ExecSpace, T> optimizer_;
  std::int64_t t_ = 0;
  bool time_phases_ = false;
};

}  // namespace gpt2
