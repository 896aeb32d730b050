#include "self_check.hpp"

#include "reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <stdexcept>

namespace gpt2 {

namespace {

double mean_loss(const ReferenceModel& m) {
  const std::vector<double> losses = reference_forward(m).losses;
  return std::accumulate(losses.begin(), losses.end(), 0.0) / double(losses.size());
}

// For every parameter tensor: its largest-gradient entry and two others,
// (loss(p + h) − loss(p − h)) / 2h against the analytic gradient. The error
// of the difference is ~h²·|f'''| + ε₆₄/h ≈ 1e-10 at h = 1e-5: far below
// the 1e-6 (relative to the tensor's largest gradient) asked here, and far
// above it a wrong term of the backward.
void check_by_finite_differences(ReferenceModel m, const Doubles& grads) {
  const double h = 1e-5;
  for (const TensorSpec& s : parameter_specs(m.cfg)) {
    const std::vector<double>& g = grads.at("grad." + s.name);
    const std::size_t top = std::size_t(
        std::max_element(g.begin(), g.end(),
                         [](double a, double b) { return std::abs(a) < std::abs(b); }) -
        g.begin());
    const double scale = std::max(std::abs(g[top]), 1e-12);
    for (std::size_t i : {top, g.size() / 3, g.size() - 1}) {
      double& p = m.params[s.name][i];
      const double saved = p;
      p = saved + h;
      const double up = mean_loss(m);
      p = saved - h;
      const double down = mean_loss(m);
      p = saved;
      const double fd = (up - down) / (2 * h);
      if (std::abs(fd - g[i]) > 1e-6 * scale) {
        throw std::runtime_error("the float64 reference's backward disagrees with finite "
                                 "differences at " + s.name + "[" + std::to_string(i) + "]: " +
                                 std::to_string(g[i]) + " against " + std::to_string(fd));
      }
    }
  }
}

std::vector<float> to_floats(const std::vector<double>& v) {
  return std::vector<float>(v.begin(), v.end());
}

}  // namespace

SelfCheck make_self_check(const Config& cfg, std::uint64_t seed) {
  const ReferenceModel model = random_model(cfg, seed);
  const ReferenceForward forward = reference_forward(model);
  SelfCheck s;
  s.gradients = reference_backward(model, forward);
  check_by_finite_differences(model, s.gradients);
  std::printf("float64 reference: backward = central differences of its forward "
              "(3 entries of each of %zu parameters)\n", parameter_specs(cfg).size());
  s.inputs.cfg = cfg;
  for (const auto& [name, values] : model.params) s.inputs.tensors[name] = to_floats(values);
  for (const auto& [name, values] : forward.acts) s.inputs.tensors[name] = to_floats(values);
  s.inputs.tokens = model.tokens;
  s.inputs.targets = model.targets;
  s.losses = forward.losses;
  return s;
}

}  // namespace gpt2
