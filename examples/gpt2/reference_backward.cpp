// The float64 GPT-2's backward (reference.hpp): the chain rule through
// reference_forward's layers in reverse, every gradient summed (+=).
#include "reference.hpp"
#include "reference_layers.hpp"

#include <algorithm>
#include <cmath>

namespace gpt2 {

Doubles reference_backward(const ReferenceModel& m, const ReferenceForward& f) {
  const Config& c = m.cfg;
  const index_t L = c.L, C = c.C, BT = c.B * c.T, T = c.T, Vp = c.Vp;
  Doubles g;
  for (const TensorSpec& s : gradient_specs(c)) g[s.name].assign(s.size(), 0.0);
  const auto P = [&](const char* name, index_t l, index_t per_layer) {
    return m.params.at(name).data() + l * per_layer;
  };
  const auto A = [&](const char* name, index_t l, index_t per_layer) {
    return f.acts.at(name).data() + l * per_layer;
  };
  const auto G = [&](const char* name, index_t l, index_t per_layer) {
    return g.at(std::string("grad.") + name).data() + l * per_layer;
  };

  // The loss is the mean over positions: each position's dloss is 1 / (B·T).
  std::vector<double> dlogits(BT * Vp, 0.0);
  const double* logits = A("logits", 0, 0);
  for (index_t i = 0; i < BT; ++i) {
    const double* row = logits + i * Vp;
    const double top = *std::max_element(row, row + c.V);
    double sum = 0.0;
    for (index_t v = 0; v < c.V; ++v) sum += std::exp(row[v] - top);
    for (index_t v = 0; v < c.V; ++v) {
      const double p = std::exp(row[v] - top) / sum;
      dlogits[i * Vp + v] = (p - (v == m.targets[i] ? 1.0 : 0.0)) / double(BT);
    }
  }
  std::vector<double> dlnf(BT * C, 0.0), dresidual(BT * C, 0.0), dres2(BT * C, 0.0);
  ref::matmul_backward(dlnf.data(), G("wte", 0, 0), nullptr, dlogits.data(), A("lnf", 0, 0),
                       P("wte", 0, 0), BT, C, Vp);
  ref::layernorm_backward(dresidual.data(), G("lnfw", 0, 0), G("lnfb", 0, 0), dlnf.data(),
                          A("residual3", L - 1, BT * C), P("lnfw", 0, 0), A("lnf_mean", 0, 0),
                          A("lnf_rstd", 0, 0), BT, C);

  std::vector<double> dfch_gelu(BT * 4 * C), dln2(BT * C), datty(BT * C), dqkv(BT * 3 * C),
      dln1(BT * C);
  for (index_t l = L - 1; l >= 0; --l) {
    // dresidual: the gradient of residual3[l]; it flows on to residual2 and
    // to the layer's input unchanged (the residual adds), plus each branch's.
    std::fill(dfch_gelu.begin(), dfch_gelu.end(), 0.0);
    ref::matmul_backward(dfch_gelu.data(), G("fcprojw", l, 4 * C * C), G("fcprojb", l, C),
                         dresidual.data(), A("fch_gelu", l, BT * 4 * C), P("fcprojw", l, 4 * C * C),
                         BT, 4 * C, C);
    const double* fch = A("fch", l, BT * 4 * C);
    for (index_t i = 0; i < BT * 4 * C; ++i) dfch_gelu[i] *= ref::gelu_derivative(fch[i]);
    std::fill(dln2.begin(), dln2.end(), 0.0);
    ref::matmul_backward(dln2.data(), G("fcw", l, 4 * C * C), G("fcb", l, 4 * C),
                         dfch_gelu.data(), A("ln2", l, BT * C), P("fcw", l, 4 * C * C), BT, C,
                         4 * C);
    dres2 = dresidual;
    ref::layernorm_backward(dres2.data(), G("ln2w", l, C), G("ln2b", l, C), dln2.data(),
                            A("residual2", l, BT * C), P("ln2w", l, C), A("ln2_mean", l, BT),
                            A("ln2_rstd", l, BT), BT, C);
    std::fill(datty.begin(), datty.end(), 0.0);
    ref::matmul_backward(datty.data(), G("attprojw", l, C * C), G("attprojb", l, C), dres2.data(),
                         A("atty", l, BT * C), P("attprojw", l, C * C), BT, C, C);
    std::fill(dqkv.begin(), dqkv.end(), 0.0);
    ref::attention_backward(dqkv.data(), datty.data(), A("qkv", l, BT * 3 * C),
                            A("att", l, c.B * c.NH * T * T), c.B, T, C, c.NH);
    std::fill(dln1.begin(), dln1.end(), 0.0);
    ref::matmul_backward(dln1.data(), G("qkvw", l, 3 * C * C), G("qkvb", l, 3 * C), dqkv.data(),
                         A("ln1", l, BT * C), P("qkvw", l, 3 * C * C), BT, C, 3 * C);
    const double* residual = l == 0 ? A("encoded", 0, 0) : A("residual3", l - 1, BT * C);
    dresidual = dres2;
    ref::layernorm_backward(dresidual.data(), G("ln1w", l, C), G("ln1b", l, C), dln1.data(),
                            residual, P("ln1w", l, C), A("ln1_mean", l, BT), A("ln1_rstd", l, BT),
                            BT, C);
  }
  double* dencoded = G("encoded", 0, 0);
  for (index_t i = 0; i < BT; ++i) {
    for (index_t ch = 0; ch < C; ++ch) {
      const double d = dresidual[i * C + ch];
      dencoded[i * C + ch] = d;
      G("wte", 0, 0)[m.tokens[i] * C + ch] += d;
      G("wpe", 0, 0)[(i % T) * C + ch] += d;
    }
  }
  return g;
}

}  // namespace gpt2
