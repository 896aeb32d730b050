// GPT-2's shapes and the names of its tensors, as the example's three sides
// (the float64 reference, the PyTorch file, llmk's backward) share them.
// The layout is llm.c's (train_gpt2.cu): ParameterTensors in its order, with
// every layer's tensors stacked along a leading L; ActivationTensors likewise.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpt2 {

using index_t = std::int64_t;

struct Config {
  index_t L = 0;   // layers
  index_t C = 0;   // channels
  index_t NH = 0;  // heads (HS = C / NH)
  index_t V = 0;   // vocabulary
  index_t Vp = 0;  // vocabulary padded (wte's rows, the logits' columns)
  index_t B = 0;   // batch
  index_t T = 0;   // sequence length (wpe holds T rows: positions beyond T get no gradient)
};

// Throws std::invalid_argument naming the first bad field.
void validate(const Config& cfg);

// The implementation each operation's calls ask for (llmk's options.impl:
// a name of its *_impls(), or "auto"; attention's is that of the variant
// the run calls); main.cpp's --impl OP=NAME.
struct Impls {
  std::string matmul = "auto", layernorm = "auto", attention = "auto", classifier = "auto",
              encoder = "auto";
};

struct TensorSpec {
  std::string name;
  std::vector<index_t> shape;
  index_t size() const;
};

// wte (Vp, C), wpe (T, C), ln1w, ln1b (L, C), qkvw (L, 3C, C), qkvb (L, 3C),
// attprojw (L, C, C), attprojb (L, C), ln2w, ln2b (L, C), fcw (L, 4C, C),
// fcb (L, 4C), fcprojw (L, C, 4C), fcprojb (L, C), lnfw, lnfb (C).
std::vector<TensorSpec> parameter_specs(const Config& cfg);

// Whether a parameter is a matrix (wte, wpe, qkvw, attprojw, fcw, fcprojw):
// the ones weight decay applies to (PyTorch's parameter groups in llm.c's
// train_gpt2.py, and llm.c's own).
bool decays(const std::string& name);

// Where each parameter lives in one allocation (the parameters' and the
// gradients' alike): the matrices first, then the rest, each group in
// parameter_specs' order, so that a whole group is one range: one
// squared_norm over all the gradients, one adamw per group (llm.c's
// parameters are one allocation too, in its own order).
struct ParameterLayout {
  std::vector<index_t> offset;  // parameter_specs' i-th at offset[i]
  index_t decaying = 0;         // the matrices: [0, decaying)
  index_t total = 0;            // the rest: [decaying, total)
};
ParameterLayout parameter_layout(const Config& cfg);

// What the backward reads of the forward, llm.c's ActivationTensors with the
// attention's own layout (qkv unpermuted (B, T, 3C) as llmk takes it):
// encoded, ln1, ln1_mean, ln1_rstd, qkv, atty, att (L, B, NH, T, T; only for
// the materialized variant) or lse (L, B, NH, T; recompute), residual2, ln2,
// ln2_mean, ln2_rstd, fch (pre-GELU), fch_gelu, residual3, lnf, lnf_mean,
// lnf_rstd, logits (B, T, Vp). Means, rstds and lse are float in every precision.
std::vector<TensorSpec> activation_specs(const Config& cfg, bool materialized);
// Whether an activation stays float whatever the precision.
bool is_float_statistic(const std::string& name);

// The gradients compared: "grad.<parameter>" for each parameter, and
// "grad.encoded" (B, T, C), the input embedding's (wte[tokens] + wpe).
std::vector<TensorSpec> gradient_specs(const Config& cfg);

}  // namespace gpt2

#include <map>

namespace gpt2 {

// Named host arrays: parameters and activations (float, whatever the device
// precision), gradients (double: the float64 reference's, or autograd's).
using Floats = std::map<std::string, std::vector<float>>;
using Doubles = std::map<std::string, std::vector<double>>;

// Everything the backward needs, on the host.
struct HostInputs {
  Config cfg;
  Floats tensors;                     // parameter_specs and activation_specs names
  std::vector<std::int32_t> tokens;   // (B, T), in [0, V)
  std::vector<std::int32_t> targets;  // (B, T), in [0, V)
};

// Throws std::invalid_argument naming the first tensor that is missing or has
// the wrong size, or a token or target outside [0, V).
void validate(const HostInputs& in, bool materialized);

}  // namespace gpt2
