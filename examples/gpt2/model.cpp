#include "model.hpp"

#include <stdexcept>

namespace gpt2 {

void validate(const Config& cfg) {
  const auto need = [](bool ok, const char* what) {
    if (!ok) throw std::invalid_argument(what);
  };
  need(cfg.L >= 1, "L: expected at least 1 layer");
  need(cfg.C >= 1, "C: expected at least 1 channel");
  need(cfg.NH >= 1 && cfg.C % cfg.NH == 0, "NH: expected at least 1 head, dividing C");
  need(cfg.V >= 1, "V: expected a vocabulary of at least 1 token");
  need(cfg.Vp >= cfg.V, "Vp: expected the padded vocabulary to be at least V");
  need(cfg.B >= 1, "B: expected at least 1 sequence");
  need(cfg.T >= 1, "T: expected at least 1 position");
}

index_t TensorSpec::size() const {
  index_t n = 1;
  for (index_t e : shape) n *= e;
  return n;
}

std::vector<TensorSpec> parameter_specs(const Config& c) {
  const index_t L = c.L, C = c.C;
  return {{"wte", {c.Vp, C}},          {"wpe", {c.T, C}},
          {"ln1w", {L, C}},            {"ln1b", {L, C}},
          {"qkvw", {L, 3 * C, C}},     {"qkvb", {L, 3 * C}},
          {"attprojw", {L, C, C}},     {"attprojb", {L, C}},
          {"ln2w", {L, C}},            {"ln2b", {L, C}},
          {"fcw", {L, 4 * C, C}},      {"fcb", {L, 4 * C}},
          {"fcprojw", {L, C, 4 * C}},  {"fcprojb", {L, C}},
          {"lnfw", {C}},               {"lnfb", {C}}};
}

bool decays(const std::string& name) {
  return name == "wte" || name == "wpe" || name == "qkvw" || name == "attprojw" || name == "fcw" ||
         name == "fcprojw";
}

ParameterLayout parameter_layout(const Config& cfg) {
  const std::vector<TensorSpec> specs = parameter_specs(cfg);
  ParameterLayout layout;
  layout.offset.resize(specs.size());
  for (const bool matrices : {true, false}) {
    for (std::size_t i = 0; i < specs.size(); ++i) {
      if (decays(specs[i].name) != matrices) continue;
      layout.offset[i] = layout.total;
      layout.total += specs[i].size();
    }
    if (matrices) layout.decaying = layout.total;
  }
  return layout;
}

std::vector<TensorSpec> activation_specs(const Config& c, bool materialized) {
  const index_t L = c.L, B = c.B, T = c.T, C = c.C;
  std::vector<TensorSpec> s = {{"encoded", {B, T, C}},
                               {"ln1", {L, B, T, C}},
                               {"ln1_mean", {L, B, T}},
                               {"ln1_rstd", {L, B, T}},
                               {"qkv", {L, B, T, 3 * C}},
                               {"atty", {L, B, T, C}}};
  if (materialized) {
    s.push_back({"att", {L, B, c.NH, T, T}});
  } else {
    s.push_back({"lse", {L, B, c.NH, T}});
  }
  const std::vector<TensorSpec> rest = {{"residual2", {L, B, T, C}},
                                        {"ln2", {L, B, T, C}},
                                        {"ln2_mean", {L, B, T}},
                                        {"ln2_rstd", {L, B, T}},
                                        {"fch", {L, B, T, 4 * C}},
                                        {"fch_gelu", {L, B, T, 4 * C}},
                                        {"residual3", {L, B, T, C}},
                                        {"lnf", {B, T, C}},
                                        {"lnf_mean", {B, T}},
                                        {"lnf_rstd", {B, T}},
                                        {"logits", {B, T, c.Vp}}};
  s.insert(s.end(), rest.begin(), rest.end());
  return s;
}

bool is_float_statistic(const std::string& name) {
  const auto ends_with = [&](const std::string& suffix) {
    return name.size() >= suffix.size() &&
           name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends_with("_mean") || ends_with("_rstd") || name == "lse";
}

std::vector<TensorSpec> gradient_specs(const Config& cfg) {
  std::vector<TensorSpec> g;
  for (const TensorSpec& p : parameter_specs(cfg)) g.push_back({"grad." + p.name, p.shape});
  g.push_back({"grad.encoded", {cfg.B, cfg.T, cfg.C}});
  return g;
}

}  // namespace gpt2

namespace gpt2 {

void validate(const HostInputs& in, bool materialized) {
  validate(in.cfg);
  std::vector<TensorSpec> wanted = parameter_specs(in.cfg);
  for (const TensorSpec& s : activation_specs(in.cfg, materialized)) wanted.push_back(s);
  for (const TensorSpec& s : wanted) {
    const auto it = in.tensors.find(s.name);
    if (it == in.tensors.end()) {
      throw std::invalid_argument(s.name + ": missing" +
                                  (s.name == "att" ? " (the materialized variant needs the "
                                                     "forward's att; write it with --save-att)"
                                                   : ""));
    }
    if (index_t(it->second.size()) != s.size()) {
      throw std::invalid_argument(s.name + ": expected " + std::to_string(s.size()) +
                                  " elements, got " + std::to_string(it->second.size()));
    }
  }
  const auto check_ids = [&](const std::vector<std::int32_t>& ids, const char* what) {
    if (index_t(ids.size()) != in.cfg.B * in.cfg.T) {
      throw std::invalid_argument(std::string(what) + ": expected B·T = " +
                                  std::to_string(in.cfg.B * in.cfg.T) + " of them");
    }
    for (std::int32_t id : ids) {
      if (id < 0 || id >= in.cfg.V) {
        throw std::invalid_argument(std::string(what) + ": expected values in [0, V), got " +
                                    std::to_string(id));
      }
    }
  };
  check_ids(in.tokens, "tokens");
  check_ids(in.targets, "targets");
}

}  // namespace gpt2
