#include "train_report.hpp"

#include <Kokkos_Core.hpp>
#ifdef KOKKOS_ENABLE_CUDA
#include <cuda_runtime.h>
#endif

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace gpt2 {

namespace {

// The device memory in use (Cuda; 0 on a host): llmk allocates everything
// before the first step, so the difference from before is what it holds.
std::size_t device_memory_used() {
#ifdef KOKKOS_ENABLE_CUDA
  std::size_t free = 0, total = 0;
  if (cudaMemGetInfo(&free, &total) == cudaSuccess) return total - free;
#endif
  return 0;
}

// The median step time after the first (which allocates and warms up).
double median_seconds(std::vector<double> s) {
  if (s.size() > 1) s.erase(s.begin());
  if (s.empty()) return 0;
  std::nth_element(s.begin(), s.begin() + std::ptrdiff_t(s.size() / 2), s.end());
  return s[s.size() / 2];
}

void write_array(std::ofstream& out, const char* name, const std::vector<double>& v) {
  out << "  \"" << name << "\": [";
  for (std::size_t i = 0; i < v.size(); ++i) out << (i ? ", " : "") << v[i];
  out << "],\n";
}

}  // namespace

TrainReport::TrainReport(const Config& cfg, std::string precision, std::int64_t steps)
    : cfg_(cfg), precision_(std::move(precision)), steps_(steps) {}

void TrainReport::start(const std::string& model, index_t maxT) {
  memory_before_ = device_memory_used();
  std::printf("llmk-gpt2-train: %s (L %lld, C %lld, NH %lld, V %lld, Vp %lld, maxT %lld), %s, "
              "B %lld, T %lld, %lld steps on %s\n",
              model.c_str(), (long long)cfg_.L, (long long)cfg_.C, (long long)cfg_.NH,
              (long long)cfg_.V, (long long)cfg_.Vp, (long long)maxT, precision_.c_str(),
              (long long)cfg_.B, (long long)cfg_.T, (long long)steps_,
              Kokkos::DefaultExecutionSpace::name());
}

void TrainReport::step(std::int64_t s, const StepResult& r, float lr, double seconds) {
  if (s == 0) memory_used_ = device_memory_used() - std::min(memory_before_, device_memory_used());
  losses_.push_back(r.loss), norms_.push_back(r.grad_norm), lrs_.push_back(lr);
  seconds_.push_back(seconds);
  if (r.forward_s > 0) {
    forward_s_.push_back(r.forward_s), backward_s_.push_back(r.backward_s);
    optimizer_s_.push_back(r.optimizer_s);
  }
  const double tokens = double(cfg_.B * cfg_.T);
  std::printf("step %4lld/%lld: loss %.6f  norm %.4f  lr %.2e  %.2f ms  %.0f tok/s\n",
              (long long)s + 1, (long long)steps_, r.loss, r.grad_norm, lr, seconds * 1e3,
              tokens / seconds);
}

void TrainReport::validation(std::int64_t step, double loss) {
  val_losses_.emplace_back(step, loss);
  std::printf("val loss %.6f (after %lld steps)\n", loss, (long long)step);
}

void TrainReport::finish(const std::string& json_path) const {
  const double median = median_seconds(seconds_);
  const double tokens_per_s = median > 0 ? double(cfg_.B * cfg_.T) / median : 0;
  if (!losses_.empty())
    std::printf("summary: %zu steps, train loss %.4f -> %.4f, median step %.2f ms "
                "(after the first), %.0f tokens/s%s\n",
                losses_.size(), losses_.front(), losses_.back(), median * 1e3, tokens_per_s,
                memory_used_ ? (", device memory " + std::to_string(memory_used_ >> 20) + " MiB")
                                   .c_str()
                             : "");
  if (!forward_s_.empty())
    std::printf("phases (fenced, median after the first step): forward %.2f ms, backward %.2f "
                "ms, norm and AdamW %.2f ms\n",
                median_seconds(forward_s_) * 1e3, median_seconds(backward_s_) * 1e3,
                median_seconds(optimizer_s_) * 1e3);
  if (json_path.empty()) return;
  std::ofstream out(json_path);
  out.precision(9);
  out << "{\n  \"precision\": \"" << precision_ << "\",\n  \"B\": " << cfg_.B
      << ",\n  \"T\": " << cfg_.T << ",\n  \"space\": \"" << Kokkos::DefaultExecutionSpace::name()
      << "\",\n";
  write_array(out, "losses", losses_);
  write_array(out, "grad_norms", norms_);
  write_array(out, "lrs", lrs_);
  write_array(out, "step_seconds", seconds_);
  if (!forward_s_.empty()) {
    write_array(out, "forward_seconds", forward_s_);
    write_array(out, "backward_seconds", backward_s_);
    write_array(out, "optimizer_seconds", optimizer_s_);
  }
  out << "  \"val_losses\": [";
  for (std::size_t i = 0; i < val_losses_.size(); ++i)
    out << (i ? ", " : "") << "[" << val_losses_[i].first << ", " << val_losses_[i].second << "]";
  out << "],\n  \"median_step_ms\": " << median * 1e3 << ",\n  \"tokens_per_s\": " << tokens_per_s
      << ",\n  \"device_memory_bytes\": " << memory_used_ << "\n}\n";
  if (!out) throw std::runtime_error(json_path + ": cannot write");
}

}  // namespace gpt2
