// GPT-2's tensors on the device, one view per tensor of llm.c's
// ParameterTensors and ActivationTensors (model.hpp's names), allocated once.
#pragma once

#include "device.hpp"
#include "model.hpp"

#include <string>
#include <utility>
#include <vector>

namespace gpt2 {

// One buffer per parameter (or per parameter's gradient), in llm.c's order,
// each a range of one allocation (parameter_layout's).
template <class ExecSpace, class T>
struct ParameterTensors {
  Buffer<ExecSpace, T> wte, wpe, ln1w, ln1b, qkvw, qkvb, attprojw, attprojb, ln2w, ln2b, fcw, fcb,
      fcprojw, fcprojb, lnfw, lnfb;
  Buffer<ExecSpace, T> all;  // the allocation: parameter_layout(cfg).total elements, zeros

  void allocate(const Config& cfg, const std::string& label) {
    const ParameterLayout layout = parameter_layout(cfg);
    const std::vector<TensorSpec> specs = parameter_specs(cfg);
    all = Buffer<ExecSpace, T>("gpt2::" + label, layout.total);
    std::size_t i = 0;
    for_each([&](const char*, Buffer<ExecSpace, T>& b) {
      const index_t begin = layout.offset[i];
      b = Kokkos::subview(all, std::pair<index_t, index_t>(begin, begin + specs[i++].size()));
    });
  }

  // f(name, buffer&) for each, in parameter_specs' order.
  template <class F>
  void for_each(F&& f) {
    f("wte", wte), f("wpe", wpe), f("ln1w", ln1w), f("ln1b", ln1b), f("qkvw", qkvw);
    f("qkvb", qkvb), f("attprojw", attprojw), f("attprojb", attprojb), f("ln2w", ln2w);
    f("ln2b", ln2b), f("fcw", fcw), f("fcb", fcb), f("fcprojw", fcprojw), f("fcprojb", fcprojb);
    f("lnfw", lnfw), f("lnfb", lnfb);
  }
};

// What the backward reads of the forward: T (the precision's type) for
// activations, float for the layer norms' statistics and attention's lse.
template <class ExecSpace, class T>
struct ActivationTensors {
  Buffer<ExecSpace, T> encoded, ln1, qkv, atty, att, residual2, ln2, fch, fch_gelu, residual3, lnf,
      logits;
  Buffer<ExecSpace, float> ln1_mean, ln1_rstd, lse, ln2_mean, ln2_rstd, lnf_mean, lnf_rstd;

  // f(name, buffer&) for each of activation_specs(cfg, materialized).
  template <class F>
  void for_each(bool materialized, F&& f) {
    f("encoded", encoded), f("ln1", ln1), f("ln1_mean", ln1_mean), f("ln1_rstd", ln1_rstd);
    f("qkv", qkv), f("atty", atty);
    if (materialized) {
      f("att", att);
    } else {
      f("lse", lse);
    }
    f("residual2", residual2), f("ln2", ln2), f("ln2_mean", ln2_mean), f("ln2_rstd", ln2_rstd);
    f("fch", fch), f("fch_gelu", fch_gelu), f("residual3", residual3), f("lnf", lnf);
    f("lnf_mean", lnf_mean), f("lnf_rstd", lnf_rstd), f("logits", logits);
  }
};

}  // namespace gpt2
