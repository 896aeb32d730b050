// The float64 GPT-2: random model and forward (reference.hpp).
#include "reference.hpp"
#include "reference_layers.hpp"

#include <algorithm>
#include <cmath>
#include <random>

namespace gpt2 {

ReferenceModel random_model(const Config& cfg, std::uint64_t seed) {
  validate(cfg);
  ReferenceModel m;
  m.cfg = cfg;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (const TensorSpec& s : parameter_specs(cfg)) {
    std::vector<double>& p = m.params[s.name];
    p.resize(std::size_t(s.size()));
    const bool layernorm_weight = s.name == "ln1w" || s.name == "ln2w" || s.name == "lnfw";
    for (double& x : p) x = layernorm_weight ? 1.0 + 0.1 * normal(rng) : 0.02 * normal(rng);
  }
  // wte at 0.02 gives logits of ~0.02 · ‖lnf‖ ≈ 0.1: a flat softmax. Larger
  // embeddings make the classifier's gradient less uniform.
  for (double& x : m.params["wte"]) x *= 10.0;
  std::uniform_int_distribution<std::int32_t> token(0, std::int32_t(cfg.V - 1));
  m.tokens.resize(std::size_t(cfg.B * cfg.T));
  m.targets.resize(m.tokens.size());
  for (auto& t : m.tokens) t = token(rng);
  for (auto& t : m.targets) t = token(rng);
  return m;
}

ReferenceForward reference_forward(const ReferenceModel& m) {
  const Config& c = m.cfg;
  const index_t L = c.L, C = c.C, BT = c.B * c.T, T = c.T;
  ReferenceForward f;
  for (const TensorSpec& s : activation_specs(c, true)) f.acts[s.name].assign(s.size(), 0.0);
  for (const TensorSpec& s : activation_specs(c, false)) f.acts[s.name].assign(s.size(), 0.0);
  const auto P = [&](const char* name, index_t l, index_t per_layer) {
    return m.params.at(name).data() + l * per_layer;
  };
  const auto A = [&](const char* name, index_t l, index_t per_layer) {
    return f.acts.at(name).data() + l * per_layer;
  };

  double* encoded = A("encoded", 0, 0);
  for (index_t i = 0; i < BT; ++i) {
    for (index_t ch = 0; ch < C; ++ch) {
      encoded[i * C + ch] = P("wte", 0, 0)[m.tokens[i] * C + ch] + P("wpe", 0, 0)[(i % T) * C + ch];
    }
  }
  std::vector<double> attproj(BT * C), fcproj(BT * C);
  for (index_t l = 0; l < L; ++l) {
    const double* residual = l == 0 ? encoded : A("residual3", l - 1, BT * C);
    ref::layernorm(A("ln1", l, BT * C), A("ln1_mean", l, BT), A("ln1_rstd", l, BT), residual,
                   P("ln1w", l, C), P("ln1b", l, C), BT, C);
    ref::matmul(A("qkv", l, BT * 3 * C), A("ln1", l, BT * C), P("qkvw", l, 3 * C * C),
                P("qkvb", l, 3 * C), BT, C, 3 * C);
    ref::attention(A("atty", l, BT * C), A("att", l, c.B * c.NH * T * T),
                   A("lse", l, c.B * c.NH * T), A("qkv", l, BT * 3 * C), c.B, T, C, c.NH);
    ref::matmul(attproj.data(), A("atty", l, BT * C), P("attprojw", l, C * C),
                P("attprojb", l, C), BT, C, C);
    double* residual2 = A("residual2", l, BT * C);
    for (index_t i = 0; i < BT * C; ++i) residual2[i] = residual[i] + attproj[i];
    ref::layernorm(A("ln2", l, BT * C), A("ln2_mean", l, BT), A("ln2_rstd", l, BT), residual2,
                   P("ln2w", l, C), P("ln2b", l, C), BT, C);
    double* fch = A("fch", l, BT * 4 * C);
    ref::matmul(fch, A("ln2", l, BT * C), P("fcw", l, 4 * C * C), P("fcb", l, 4 * C), BT, C,
                4 * C);
    double* fch_gelu = A("fch_gelu", l, BT * 4 * C);
    for (index_t i = 0; i < BT * 4 * C; ++i) fch_gelu[i] = ref::gelu(fch[i]);
    ref::matmul(fcproj.data(), fch_gelu, P("fcprojw", l, 4 * C * C), P("fcprojb", l, C), BT,
                4 * C, C);
    double* residual3 = A("residual3", l, BT * C);
    for (index_t i = 0; i < BT * C; ++i) residual3[i] = residual2[i] + fcproj[i];
  }
  ref::layernorm(A("lnf", 0, 0), A("lnf_mean", 0, 0), A("lnf_rstd", 0, 0),
                 A("residual3", L - 1, BT * C), P("lnfw", 0, 0), P("lnfb", 0, 0), BT, C);
  double* logits = A("logits", 0, 0);
  ref::matmul(logits, A("lnf", 0, 0), P("wte", 0, 0), nullptr, BT, C, c.Vp);

  f.losses.resize(BT);
  for (index_t i = 0; i < BT; ++i) {
    const double* row = logits + i * c.Vp;
    const double top = *std::max_element(row, row + c.V);
    double sum = 0.0;
    for (index_t v = 0; v < c.V; ++v) sum += std::exp(row[v] - top);
    f.losses[i] = top + std::log(sum) - row[m.targets[i]];
  }
  return f;
}

}  // namespace gpt2
