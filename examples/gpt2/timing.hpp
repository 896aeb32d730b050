// The backward's time: the median of `repeats` whole runs (no fence inside,
// device-synchronised around each, the L2 flushed and the logits restored
// before each, untimed), then the median per step of as many runs fenced
// after every step, as fractions of their sum; PyTorch's times beside.
//
// And each step alone (StepClock::alone: its calls without the others
// between them), against which its time in the sequence is checked: on a
// host, libraries that each keep their own threads (a pthreads OpenBLAS
// beside Kokkos' OpenMP pool) make a step that follows another library's
// call wait for that library's spinning threads — a layer norm of 3.6 ms
// took 483 ms that way (docs/cpu.md). The check compares the fastest run of
// each (a collapse slows every run; another process's burst slows a few): a
// step more than kCollapseRatio times slower in the sequence than alone, by
// more than kCollapseFloorMs (below it, a 2-core machine's noise), is that
// thread collapse, which print_times reports and returns. Only where other
// processes left the cores to this one (machine_load.hpp): else "not judged".
#pragma once

#include "backward.hpp"
#include "machine_load.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace gpt2 {

inline double minimum(const std::vector<double>& v) {
  return v.empty() ? 0.0 : *std::min_element(v.begin(), v.end());
}
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? 0.0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

constexpr double kCollapseRatio = 10, kCollapseFloorMs = 1;
constexpr double kBusyMachine = 0.1;  // others' share of the cores above which it is not judged

enum class Threads { fine, collapsed, not_judged };

template <class ExecSpace, class T>
Threads print_times(Gpt2Backward<ExecSpace, T>& backward, int repeats, double l2_flush_mb,
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
  const MachineLoad load;  // over the fenced runs, whose steps are compared
  std::vector<std::vector<double>> per_step(kSteps);
  for (int r = 0; r < repeats; ++r) {
    prepare(r);
    StepClock clock;
    backward.run(&clock);
    for (int s = 0; s < kSteps; ++s) per_step[s].push_back(clock.seconds[s] * 1e3);
  }
  std::vector<double> step_ms(kSteps), alone_min(kSteps);
  double sum = 0;
  for (int s = 0; s < kSteps; ++s) sum += step_ms[s] = median(per_step[s]);
  for (int s = 0; s < kSteps; ++s) {
    std::vector<double> alone;
    for (int r = 0; r < repeats; ++r) {
      prepare(r);
      StepClock clock;
      clock.alone = s;
      backward.run(&clock);
      alone.push_back(clock.seconds[s] * 1e3);
    }
    alone_min[s] = minimum(alone);
  }
  std::printf("\ntime (median of %d, L2 flush %.0f MiB; min: the fastest of them, in the "
              "sequence and alone)\n%-28s %10s %9s %10s %10s %7s\n",
              repeats, l2_flush_mb, "step (fenced after each)", "ms", "fraction", "min ms",
              "alone min", "ratio");
  std::string collapsed;
  for (int s = 0; s < kSteps; ++s) {
    const double in_sequence = minimum(per_step[s]);
    const double ratio = alone_min[s] > 0 ? in_sequence / alone_min[s] : 0.0;
    std::printf("%-28s %10.4f %8.1f%% %10.4f %10.4f %7.2f\n", step_name(Step(s)), step_ms[s],
                sum > 0 ? 100 * step_ms[s] / sum : 0.0, in_sequence, alone_min[s], ratio);
    if (ratio > kCollapseRatio && in_sequence - alone_min[s] > kCollapseFloorMs)
      collapsed += std::string(collapsed.empty() ? "" : ", ") + step_name(Step(s));
  }
  std::printf("%-28s %10.4f\n", "sum of the steps", sum);
  const double llmk_ms = median(whole);
  std::printf("%-28s %10.4f\n", "llmk backward (no fences)", llmk_ms);
  for (const auto& [what, ms] : torch_ms) {
    std::printf("%-28s %10.4f   (%.2fx llmk's time)\n", ("PyTorch " + what).c_str(), ms,
                ms / llmk_ms);
  }
  const double others = load.others();
  if (others > kBusyMachine) {
    std::printf("threads not judged: other processes took %.0f%% of the cores meanwhile\n",
                100 * others);
    return Threads::not_judged;
  }
  if (collapsed.empty()) return Threads::fine;
  std::printf("THREAD COLLAPSE: %s over %.0fx slower in the sequence than alone (threads of "
              "two libraries fighting for the cores: docs/cpu.md)\n",
              collapsed.c_str(), kCollapseRatio);
  return Threads::collapsed;
}

}  // namespace gpt2
