// Wall-clock timing of one enqueued call, fenced on both sides, with a time
// budget: slow implementations get fewer repeats.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <vector>

namespace llmk::perf {

// Seconds one enqueued call takes on the device, measured there (CUDA events
// around it on its stream): excludes the launch latency and the cost of the
// fence, which the wall clock would add to a short GPU kernel.
using DeviceTimer = std::function<double(const std::function<void()>& call)>;

struct TimingPlan {
  int warmup = 3;         // untimed calls first (capped by a quarter of the budget)
  int repeat = 100;       // most timed calls
  double budget_s = 15.0;  // timed calls stop at about this much time (at least one call)
  DeviceTimer device_timer = {};  // set on GPU backends; empty: wall clock between fences
};

struct Timing {
  double ms_median = 0, ms_min = 0;
  int repeats = 0;
};

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// before(), untimed (e.g. an L2 flush); then fence(); t0; call(); fence(): the
// seconds one enqueued call takes.
template <class Call, class Fence>
double timed_call(Call&& call, Fence&& fence, const std::function<void()>& before = {}) {
  if (before) before();
  fence();
  const auto t0 = std::chrono::steady_clock::now();
  call();
  fence();
  return seconds_since(t0);
}

// The first timed call sets the number of repeats: clamp(round(budget / first
// call), 1, repeat). prior_s > 0 is the time of an identical call just made (the
// validation call): it counts as a warm-up, and when it alone exceeds the
// budget it is the one sample, so that a slow implementation costs one call.
template <class Call, class Fence>
Timing time_calls(const TimingPlan& plan, Call&& call, Fence&& fence, double prior_s = 0,
                  const std::function<void()>& before_each = {}) {
  if (prior_s > 0 && prior_s >= plan.budget_s) return {1e3 * prior_s, 1e3 * prior_s, 1};
  double warm_s = prior_s;
  const int warmup = plan.warmup - (prior_s > 0 ? 1 : 0);
  for (int i = 0; i < warmup && warm_s < plan.budget_s / 4; ++i) warm_s += timed_call(call, fence);

  auto sample = [&] {
    if (!plan.device_timer) return timed_call(call, fence, before_each);
    if (before_each) before_each();
    fence();
    return plan.device_timer(call);
  };
  std::vector<double> samples{sample()};
  const double fit = std::round(plan.budget_s / std::max(samples[0], 1e-9));
  const int repeats = int(std::clamp(fit, 1.0, double(std::max(plan.repeat, 1))));
  while (int(samples.size()) < repeats) samples.push_back(sample());

  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  const double median = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  return {1e3 * median, 1e3 * samples.front(), int(n)};
}

}  // namespace llmk::perf
