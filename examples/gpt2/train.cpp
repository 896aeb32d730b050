#include "train.hpp"

#include "llmc_files.hpp"

#include <glob.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

namespace gpt2 {

float Schedule::at(std::int64_t s) const {
  if (s < warmup) return lr * float(s + 1) / float(warmup);
  const float min_lr = lr * final_lr_frac;
  const std::int64_t decay_steps = steps - warmup;
  if (decay_steps <= 1) return lr;
  const double ratio = double(s - warmup) / double(decay_steps - 1);
  const double coeff = 0.5 * (1.0 + std::cos(M_PI * ratio));  // 1 → 0
  return min_lr + float(coeff) * (lr - min_lr);
}

TokenStream::TokenStream(const std::string& pattern, index_t B, index_t T, index_t V)
    : batch_(std::size_t(B * T)), V_(V) {
  glob_t g{};
  if (::glob(pattern.c_str(), 0, nullptr, &g) == 0)
    files_.assign(g.gl_pathv, g.gl_pathv + g.gl_pathc);  // sorted by glob
  ::globfree(&g);
  if (files_.empty()) throw std::invalid_argument(pattern + ": no token file matches it");
  load(0);
}

void TokenStream::load(std::size_t file) {
  const std::string& path = files_[file];
  tokens_ = read_tokens(path);
  if (tokens_.size() < batch_ + 1)
    throw std::invalid_argument(path + ": " + std::to_string(tokens_.size()) +
                                " tokens, fewer than a batch needs (B·T + 1 = " +
                                std::to_string(batch_ + 1) + ")");
  for (std::size_t i = 0; i < tokens_.size(); ++i)
    if (tokens_[i] < 0 || tokens_[i] >= V_)
      throw std::invalid_argument(path + ": token " + std::to_string(i) + " is " +
                                  std::to_string(tokens_[i]) +
                                  ", outside the model's vocabulary [0, V = " + std::to_string(V_) +
                                  ")");
  current_ = file;
  position_ = 0;
}

void TokenStream::rewind() {
  if (current_ != 0) load(0);
  position_ = 0;
}

void TokenStream::next(std::vector<std::int32_t>& inputs, std::vector<std::int32_t>& targets) {
  if (position_ + batch_ + 1 > tokens_.size()) {
    if (files_.size() > 1) load((current_ + 1) % files_.size());
    position_ = 0;
  }
  inputs.assign(tokens_.begin() + std::ptrdiff_t(position_),
                tokens_.begin() + std::ptrdiff_t(position_ + batch_));
  targets.assign(tokens_.begin() + std::ptrdiff_t(position_ + 1),
                 tokens_.begin() + std::ptrdiff_t(position_ + batch_ + 1));
  position_ += batch_;
}

Floats random_parameters(const Config& cfg, index_t maxT, std::uint64_t seed) {
  Config full = cfg;
  full.T = maxT;
  validate(full);
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const float residual_std = 0.02f / std::sqrt(2.0f * float(cfg.L));
  Floats p;
  for (const TensorSpec& s : parameter_specs(full)) {
    std::vector<float>& w = p[s.name];
    w.assign(std::size_t(s.size()), 0.0f);
    if (s.name == "ln1w" || s.name == "ln2w" || s.name == "lnfw") {
      w.assign(w.size(), 1.0f);
    } else if (decays(s.name)) {  // a matrix
      const float std = s.name == "attprojw" || s.name == "fcprojw" ? residual_std : 0.02f;
      const std::size_t n = s.name == "wte" ? std::size_t(cfg.V * cfg.C) : w.size();
      for (std::size_t i = 0; i < n; ++i) w[i] = std * normal(rng);
    }  // biases and wte's padded rows: 0
  }
  return p;
}

std::vector<std::int32_t> synthetic_tokens(index_t count, index_t V, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::int32_t> tokens(std::size_t(std::max<index_t>(count, 0)));
  std::int64_t t = 0;
  for (std::int32_t& x : tokens) {
    t = rng() % 4 == 0 ? std::int64_t(rng() % std::uint64_t(V)) : (31 * t + 7) % V;
    x = std::int32_t(t);
  }
  return tokens;
}

template <class ExecSpace, class T>
Trainer<ExecSpace, T>::Trainer(const ExecSpace& exec, const Config& cfg, const Floats& weights,
                               const OptimizerSettings& settings, const Impls& impls)
    : model_(exec, cfg, /*materialized=*/false, impls), optimizer_(cfg, settings, weights) {
  model_.load_parameters(weights);
}

template <class ExecSpace, class T>
StepResult Trainer<ExecSpace, T>::step(const std::vector<std::int32_t>& inputs,
                                       const std::vector<std::int32_t>& targets, float lr) {
  StepResult r;
  Kokkos::Timer timer;
  // The seconds since the last lap, after a fence (only when timing phases).
  const auto lap = [&](double& seconds) {
    if (!time_phases_) return;
    model_.exec().fence();
    seconds = timer.seconds();
    timer.reset();
  };
  model_.load_batch(inputs, targets);
  model_.forward(/*keep_logits=*/false);
  lap(r.forward_s);
  model_.run();
  lap(r.backward_s);
  optimizer_.step(model_.context(), model_.parameters(), model_.parameter_gradients(), lr, ++t_);
  lap(r.optimizer_s);
  r.loss = model_.mean_loss();  // waits for the step
  r.grad_norm = optimizer_.grad_norm(model_.context());
  return r;
}

template <class ExecSpace, class T>
double Trainer<ExecSpace, T>::loss(const std::vector<std::int32_t>& inputs,
                                   const std::vector<std::int32_t>& targets) {
  model_.load_batch(inputs, targets);
  return model_.evaluate();
}

template <class ExecSpace, class T>
Floats Trainer<ExecSpace, T>::weights() {
  model_.exec().fence();
  return optimizer_.weights(model_.parameters());
}

template class Trainer<Kokkos::DefaultExecutionSpace, float>;
template class Trainer<Kokkos::DefaultExecutionSpace, llmk::bf16>;

}  // namespace gpt2
