// The backward's time: the median of `repeats` whole runs (no fence inside,
// device-synchronised around each, the L2 flushed and the logits restored
// before each, untimed), then the median per step of as many runs fenced
// after every step, as fractions of their sum; PyTorch's times beside.
#pragma once

#include "backward.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace gpt2 {

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? 0.0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

template <class ExecSpace, class T>
void print_times(Gpt2Backward<ExecSpace, T>& backward, int repeats, double l2_flush_mb,
                 const std::map<std::string, double>& torch_ms) {
  const ExecSpace& exec = backward.exec();
  Buffer<ExecSpace, float> flush("gpt2::l2_flush", index_t(l2_flush_mb * (1 << 20) / 4));
  const auto prepare = [&](int r) {
    backward.reset();
    if (flush.extent(0) > 0) Kokkos::deep_copy(exec, flush, float(r));
    exec.fence();
  };
  prepare(0);
  backward.run();  // warm-up
  std::vector<double> whole;
  Kokkos::Timer timer;
  for (int r = 0; r < repeats; ++r) {
    prepare(r);
    timer.reset();
    backward.run();
    exec.fence();
    whole.push_back(timer.seconds() * 1e3);
  }
  std::vector<std::vector<double>> per_step(kSteps);
  for (int r = 0; r < repeats; ++r) {
    prepare(r);
    StepClock clock;
    backward.run(&clock);
    for (int s = 0; s < kSteps; ++s) per_step[s].push_back(clock.seconds[s] * 1e3);
  }
  std::vector<double> step_ms(kSteps);
  double sum = 0;
  for (int s = 0; s < kSteps; ++s) sum += step_ms[s] = median(per_step[s]);
  std::printf("\ntime (median of %d, L2 flush %.0f MiB)\n%-28s %10s %9s\n", repeats, l2_flush_mb,
              "step (fenced after each)", "ms", "fraction");
  for (int s = 0; s < kSteps; ++s) {
    std::printf("%-28s %10.4f %8.1f%%\n", step_name(Step(s)), step_ms[s],
                sum > 0 ? 100 * step_ms[s] / sum : 0.0);
  }
  std::printf("%-28s %10.4f\n", "sum of the steps", sum);
  const double llmk_ms = median(whole);
  std::printf("%-28s %10.4f\n", "llmk backward (no fences)", llmk_ms);
  for (const auto& [what, ms] : torch_ms) {
    std::printf("%-28s %10.4f   (%.2fx llmk's time)\n", ("PyTorch " + what).c_str(), ms,
                ms / llmk_ms);
  }
}

}  // namespace gpt2
