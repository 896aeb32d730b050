// Timing a call with warm-up, repeats and a time budget (slow calls get fewer
// repeats), and projecting a call's time from warm probes on parts of the
// problem, all through the backend's DeviceTimer (timer.hpp).
#pragma once

#include "timer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

namespace llmk::perf {

struct TimingPlan {
  int warmup = 3;          // untimed calls first (capped by a quarter of the budget)
  int repeat = 100;        // most timed calls
  double budget_s = 15.0;  // timed calls stop at about this much time (at least one call)
};

struct Timing {
  double ms_median = 0, ms_min = 0;
  int repeats = 0;
  double host_us_median = 0;  // the timer's host_seconds() over the same samples
};

// The first timed call sets the number of repeats: clamp(round(budget / first
// call), 1, repeat). prior_s > 0 is the time of an identical call just made (the
// checked call): it counts as a warm-up, and when it alone exceeds the budget
// it is the one sample, so that a slow call costs one call. before_each runs,
// untimed, before each timed call (the L2 flush).
template <class Timer, class Call>
Timing time_calls(const TimingPlan& plan, const Timer& timer, Call&& call, double prior_s = 0,
                  const std::function<void()>& before_each = {}) {
  if (prior_s > 0 && prior_s >= plan.budget_s)
    return {1e3 * prior_s, 1e3 * prior_s, 1, 1e6 * timer.host_seconds()};  // the checked call's
  double warm_s = prior_s;
  const int warmup = plan.warmup - (prior_s > 0 ? 1 : 0);
  for (int i = 0; i < warmup && warm_s < plan.budget_s / 4; ++i) warm_s += timer.time(call);

  std::vector<double> host_samples;
  auto sample = [&] {
    if (before_each) before_each();
    const double s = timer.time(call);
    host_samples.push_back(timer.host_seconds());
    return s;
  };
  std::vector<double> samples{sample()};
  const double fit = std::round(plan.budget_s / std::max(samples[0], 1e-9));
  const int repeats = int(std::clamp(fit, 1.0, double(std::max(plan.repeat, 1))));
  while (int(samples.size()) < repeats) samples.push_back(sample());

  auto median_of = [](std::vector<double>& v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  };
  const double median = median_of(samples);
  return {1e3 * median, 1e3 * samples.front(), int(samples.size()), 1e6 * median_of(host_samples)};
}

// What a call on the whole problem (`units` units: rows) is projected to
// take, from WARM calls on two parts of it: n2 = units/64 units (at least
// min(8, units/8), so that small problems are not probed on a unit or two,
// where noise hides the cost of a unit) and n1 = n2/4. A cold first call (allocation, page faults, thread start) says
// nothing of the next ones, and a call has a fixed part (e.g. touching all of
// dweight whatever the rows) that scaling a single probe by units/n would
// multiply too: the two warm sizes fit time = fixed + per_unit·n instead.
struct Projection {
  bool probed = false;  // false: the problem is too small to probe a part of it
  std::int64_t n1 = 0, n2 = 0;
  double t1 = 0, t2 = 0;       // seconds, the warm calls on n1 and n2 units (the least of each)
  double fixed_s = 0, per_unit_s = 0;
  double seconds = 0;          // fixed_s + per_unit_s · units
};

// part(n) enqueues the call on the first n units. The first call of part(n1)
// is the warm-up, untimed. When the projection exceeds confirm_above_s, both
// sizes are timed once more and the least of each kept, so that one
// disturbed sample (a loaded machine) does not skip a row.
template <class Timer>
Projection project(const Timer& timer, const std::function<void(std::int64_t)>& part,
                   std::int64_t units, double confirm_above_s) {
  Projection p;
  p.n2 = std::max<std::int64_t>({2, units / 64, std::min<std::int64_t>(8, units / 8)});
  p.n1 = std::max<std::int64_t>(1, p.n2 / 4);
  if (p.n2 >= units) return p;
  p.probed = true;
  auto at = [&](std::int64_t n) { return timer.time([&] { part(n); }); };
  auto fit = [&] {
    p.per_unit_s = std::max(0.0, (p.t2 - p.t1) / double(p.n2 - p.n1));
    p.fixed_s = std::max(0.0, p.t2 - p.per_unit_s * double(p.n2));
    p.seconds = p.fixed_s + p.per_unit_s * double(units);
  };
  at(p.n1);  // warm-up
  p.t1 = at(p.n1);
  p.t2 = at(p.n2);
  fit();
  if (p.seconds > confirm_above_s) {
    p.t1 = std::min(p.t1, at(p.n1));
    p.t2 = std::min(p.t2, at(p.n2));
    fit();
  }
  return p;
}

}  // namespace llmk::perf
