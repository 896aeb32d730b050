#include "reference_training.hpp"

#include <cmath>

namespace gpt2 {

std::vector<double> reference_training(ReferenceModel model, const OptimizerSettings& settings,
                                       const Schedule& schedule) {
  Doubles m, v;
  for (const auto& [name, p] : model.params) {
    m[name].assign(p.size(), 0.0);
    v[name].assign(p.size(), 0.0);
  }
  const double b1 = settings.beta1, b2 = settings.beta2;
  std::vector<double> losses;
  for (std::int64_t s = 0;; ++s) {
    const ReferenceForward f = reference_forward(model);
    double loss = 0;
    for (double x : f.losses) loss += x;
    losses.push_back(loss / double(f.losses.size()));
    if (s == schedule.steps) break;
    const Doubles grads = reference_backward(model, f);
    double norm = 0;
    for (const auto& [name, p] : model.params)
      for (double g : grads.at("grad." + name)) norm += g * g;
    norm = std::sqrt(norm);
    const double clip = settings.grad_clip;
    const double scale = clip > 0 && norm > clip ? clip / norm : 1.0;
    const double t = double(s + 1), lr = schedule.at(s);
    const double c1 = 1.0 - std::pow(b1, t), c2 = 1.0 - std::pow(b2, t);
    for (auto& [name, p] : model.params) {
      const std::vector<double>& g = grads.at("grad." + name);
      const double wd = decays(name) ? settings.weight_decay : 0.0;
      for (std::size_t i = 0; i < p.size(); ++i) {
        const double gi = scale * g[i];
        m[name][i] = b1 * m[name][i] + (1.0 - b1) * gi;
        v[name][i] = b2 * v[name][i] + (1.0 - b2) * gi * gi;
        p[i] -= lr * ((m[name][i] / c1) / (std::sqrt(v[name][i] / c2) + settings.eps) + wd * p[i]);
      }
    }
  }
  return losses;
}

}  // namespace gpt2
