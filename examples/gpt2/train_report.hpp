// What llmk-gpt2-train prints and writes: a line per step (loss, gradient
// norm, learning rate, ms, tokens/s), the validation losses, a summary (the
// median step after the first, its tokens/s, the device memory llmk holds),
// and --losses-out's JSON of all of it (what perf/torch_peers/gpt2_train.py
// compares with PyTorch's).
#pragma once

#include "model.hpp"
#include "train.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace gpt2 {

class TrainReport {
 public:
  TrainReport(const Config& cfg, std::string precision, std::int64_t steps);
  // Before the model is allocated: the device memory in use (Cuda).
  void start(const std::string& model, index_t maxT);
  void step(std::int64_t s, const StepResult& r, float lr, double seconds);
  void validation(std::int64_t step, double loss);
  // The summary; the JSON where path is not empty.
  void finish(const std::string& json_path) const;

 private:
  Config cfg_;
  std::string precision_;
  std::int64_t steps_;
  std::size_t memory_before_ = 0, memory_used_ = 0;
  std::vector<double> losses_, norms_, lrs_, seconds_;
  std::vector<double> forward_s_, backward_s_, optimizer_s_;  // with --time-phases
  std::vector<std::pair<std::int64_t, double>> val_losses_;
};

}  // namespace gpt2
