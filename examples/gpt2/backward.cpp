#include "backward.hpp"
#include "forward.hpp"

#include <llmk/classifier_forward.hpp>

#include <algorithm>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace gpt2 {

const char* step_name(Step s) {
  switch (s) {
    case Step::classifier: return "classifier";
    case Step::lm_head: return "matmul lm-head (wte)";
    case Step::layernorm: return "layernorm (ln1, ln2, lnf)";
    case Step::fcproj_gelu: return "matmul fcproj + gelu";
    case Step::fc: return "matmul fc";
    case Step::attproj: return "matmul attproj";
    case Step::attention: return "attention";
    case Step::qkv: return "matmul qkv";
    case Step::encoder: return "encoder";
  }
  return "?";
}

namespace {

template <class T>
constexpr bool is_bf16 = std::is_same_v<T, llmk::bf16>;

// llmk's precision configurations for T (llmk/matmul_backward.hpp).
template <class T>
const char* matmul_precision() {
  return is_bf16<T> ? "bf16-fp32grad" : "fp32";
}
template <class T>
const char* attention_precision() {
  return is_bf16<T> ? "bf16" : "fp32";
}

// Every parameter gradient is written once per backward: overwritten, so that
// repeated runs (and the timing) need no zeroing. dinp: llm.c's (overwritten).
llmk::MatmulBackwardOptions matmul_options(const Impls& impls) {
  llmk::MatmulBackwardOptions o;
  o.impl = impls.matmul;
  o.dinp_update = o.dweight_update = o.dbias_update = llmk::Update::overwrite;
  return o;
}
// dinp is the residual stream's gradient: += adds the branch's gradient to
// what flows through the residual connection (llm.c's layernorm_backward),
// except for the final layer norm, which starts it (=).
llmk::LayernormBackwardOptions layernorm_options(llmk::Update dinp, const Impls& impls) {
  llmk::LayernormBackwardOptions o;
  o.impl = impls.layernorm;
  o.dweight_update = o.dbias_update = llmk::Update::overwrite;
  o.dinp_update = dinp;
  return o;
}

template <class View>
void allocate(View& b, const std::string& name, index_t n) {
  b = View(Kokkos::view_alloc(Kokkos::WithoutInitializing, "gpt2::" + name), n);
}

template <class ExecSpace>
std::size_t workspace_bytes(const Config& c, bool materialized, const Impls& impls,
                            const char* mp, const char* ap) {
  const index_t M = c.B * c.T, C = c.C;
  const auto mm = matmul_options(impls);
  std::size_t bytes = std::max({
      llmk::matmul_backward_workspace_bytes<ExecSpace>(M, C, c.Vp, false, mm, mp),
      llmk::matmul_backward_workspace_bytes<ExecSpace>(M, 4 * C, C, true, mm, mp, true),
      llmk::matmul_backward_workspace_bytes<ExecSpace>(M, C, 4 * C, true, mm, mp),
      llmk::matmul_backward_workspace_bytes<ExecSpace>(M, C, C, true, mm, mp),
      llmk::matmul_backward_workspace_bytes<ExecSpace>(M, C, 3 * C, true, mm, mp),
      llmk::layernorm_backward_workspace_bytes<ExecSpace>(
          M, C, true, layernorm_options(llmk::Update::accumulate, impls), mp),
      llmk::layernorm_backward_workspace_bytes<ExecSpace>(
          M, C, true, layernorm_options(llmk::Update::overwrite, impls), mp)});
  llmk::EncoderBackwardOptions eo;
  eo.impl = impls.encoder;
  eo.dwpe_update = llmk::Update::overwrite;
  bytes = std::max(bytes,
                   llmk::encoder_backward_workspace_bytes<ExecSpace>(c.B, c.T, C, c.V, eo, mp));
  llmk::AttentionBackwardOptions ao;
  ao.impl = impls.attention;
  ao.dqkv_update = llmk::Update::overwrite;
  bytes = std::max(bytes, materialized ? llmk::attention_backward_workspace_bytes<ExecSpace>(
                                             c.B, c.T, C, c.NH, ao, ap)
                                       : llmk::attention_backward_recompute_workspace_bytes<
                                             ExecSpace>(c.B, c.T, C, c.NH, ao, ap));
  return bytes;
}

// Host values → a device buffer of U (floats rounded once to bf16 where U is bf16).
template <class View, class Src>
void upload(const View& dst, const std::vector<Src>& src) {
  using U = typename View::non_const_value_type;
  typename View::HostMirror host(Kokkos::view_alloc(Kokkos::WithoutInitializing, "gpt2::upload"),
                                 dst.extent(0));
  for (std::size_t i = 0; i < src.size(); ++i) host(i) = U(src[i]);
  Kokkos::deep_copy(dst, host);
}

template <class View>
std::vector<double> download(const View& src) {
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), src);
  std::vector<double> out(host.extent(0));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = double(float(host(i)));
  return out;
}

}  // namespace

template <class ExecSpace, class T>
Gpt2Backward<ExecSpace, T>::Gpt2Backward(const ExecSpace& exec, const Config& cfg,
                                         bool materialized, Impls impls)
    : exec_(exec),
      cfg_(cfg),
      materialized_(materialized),
      impls_(std::move(impls)),
      loss_positions_(cfg.B * cfg.T),
      ctx_(exec) {
  validate(cfg);
  const char* mp = matmul_precision<T>();
  const char* ap = attention_precision<T>();
  params_.allocate(cfg, "parameters");
  grads_.allocate(cfg, "gradients");
  for (const TensorSpec& s : activation_specs(cfg, materialized)) {
    acts_.for_each(materialized, [&](const char* name, auto& b) {
      if (s.name == name) allocate(b, s.name, s.size());
    });
  }
  const index_t BT = cfg.B * cfg.T, C = cfg.C;
  allocate(tokens_, "tokens", BT);
  allocate(targets_, "targets", BT);
  allocate(losses_, "losses", BT);
  allocate(dresidual_, "dresidual", BT * C);
  allocate(dl_btc_, "dl_btc", BT * C);
  allocate(dl_bt4c_, "dl_bt4c", BT * 4 * C);
  // llmk's workspace: the largest any of the calls needs, allocated once and
  // handed to the context, so that run() allocates nothing.
  // (The recompute variant's forward may run too: forward().)
  std::size_t bytes = workspace_bytes<ExecSpace>(cfg, materialized, impls_, mp, ap);
  if (!materialized) bytes = std::max(bytes, forward_workspace_bytes<ExecSpace, T>(cfg));
  if (bytes > 0) {
    allocate(workspace_, "llmk_workspace", index_t(bytes));
    ctx_.use_workspace(workspace_.data(), bytes);
  }
}

template <class ExecSpace, class T>
void Gpt2Backward<ExecSpace, T>::load(const HostInputs& in) {
  validate(in, materialized_);
  if (in.cfg.L != cfg_.L || in.cfg.C != cfg_.C || in.cfg.NH != cfg_.NH || in.cfg.V != cfg_.V ||
      in.cfg.Vp != cfg_.Vp || in.cfg.B != cfg_.B || in.cfg.T != cfg_.T) {
    throw std::invalid_argument("inputs: their configuration differs from the model's");
  }
  params_.for_each([&](const char* name, auto& b) { upload(b, in.tensors.at(name)); });
  acts_.for_each(materialized_, [&](const char* name, auto& b) { upload(b, in.tensors.at(name)); });
  save_logits();
  upload(tokens_, in.tokens);
  upload(targets_, in.targets);
}

template <class ExecSpace, class T>
void Gpt2Backward<ExecSpace, T>::reset() {
  if (logits_saved_.size() != acts_.logits.size())
    throw std::logic_error("reset: no logits were saved (load, or forward(true), first)");
  Kokkos::deep_copy(exec_, acts_.logits, logits_saved_);
}

template <class ExecSpace, class T>
void Gpt2Backward<ExecSpace, T>::forward(bool keep_logits) {
  if (materialized_)
    throw std::invalid_argument("forward: llmk's forward saves lse for the recompute variant, "
                                "not att (--attention recompute)");
  gpt2_forward(ctx_, cfg_, params_, acts_, tokens_, dl_btc_);
  if (keep_logits) save_logits();
}

template <class ExecSpace, class T>
void Gpt2Backward<ExecSpace, T>::save_logits() {
  // Allocated on first use: a trainer never restores the logits (B·T·Vp
  // elements, 0.8 GB at GPT-2's B 8, T 1024 in bf16).
  if (logits_saved_.size() != acts_.logits.size())
    allocate(logits_saved_, "logits_saved", index_t(acts_.logits.size()));
  Kokkos::deep_copy(exec_, logits_saved_, acts_.logits);
}

template <class ExecSpace, class T>
void Gpt2Backward<ExecSpace, T>::load_parameters(const Floats& params) {
  for (const TensorSpec& s : parameter_specs(cfg_)) {
    const auto it = params.find(s.name);
    if (it == params.end() || index_t(it->second.size()) != s.size())
      throw std::invalid_argument("parameters: " + s.name + " is missing or has the wrong size (" +
                                  std::to_string(s.size()) + " expected)");
  }
  params_.for_each([&](const char* name, auto& b) { upload(b, params.at(name)); });
}

template <class ExecSpace, class T>
void Gpt2Backward<ExecSpace, T>::load_batch(const std::vector<std::int32_t>& tokens,
                                            const std::vector<std::int32_t>& targets) {
  const std::size_t BT = std::size_t(cfg_.B * cfg_.T);
  for (const auto& [what, v] : {std::pair{"tokens", &tokens}, std::pair{"targets", &targets}}) {
    if (v->size() != BT)
      throw std::invalid_argument(std::string(what) + ": " + std::to_string(v->size()) +
                                  " values, expected B·T = " + std::to_string(BT));
    for (std::size_t i = 0; i < BT; ++i)
      if ((*v)[i] < 0 || (*v)[i] >= cfg_.V)
        throw std::invalid_argument(std::string(what) + "[" + std::to_string(i) + "] = " +
                                    std::to_string((*v)[i]) + ", outside [0, V = " +
                                    std::to_string(cfg_.V) + ")");
  }
  upload(tokens_, tokens);
  upload(targets_, targets);
}

template <class ExecSpace, class T>
Doubles Gpt2Backward<ExecSpace, T>::activations() const {
  exec_.fence();
  Doubles out;
  auto acts = acts_;  // for_each is not const; the copy shares the buffers
  acts.for_each(materialized_, [&](const char* name, auto& b) { out[name] = download(b); });
  return out;
}

template <class ExecSpace, class T>
void Gpt2Backward<ExecSpace, T>::classifier() {
  // The loss: mean over the B·T positions (of the global batch, when data
  // parallel), so each position's dloss is 1/(B·T).
  // dlogits in place of the logits. The targets were checked when they were
  // loaded: the call's own check (a wait for the device) is not needed.
  llmk::ClassifierBackwardOptions classifier_options;
  classifier_options.check_targets = false;
  classifier_options.impl = impls_.classifier;
  llmk::classifier_backward(ctx_, acts_.logits.data(), losses_.data(), acts_.logits.data(),
                            targets_.data(), 1.0f / float(loss_positions_), cfg_.B, cfg_.T, cfg_.V,
                            cfg_.Vp, classifier_options);
}

template <class ExecSpace, class T>
double Gpt2Backward<ExecSpace, T>::evaluate() {
  forward(false);
  // The losses alone: the logits stay as the forward left them.
  llmk::ClassifierForwardOptions options;
  options.check_targets = false;  // checked when loaded
  llmk::classifier_forward(ctx_, losses_.data(), acts_.logits.data(), targets_.data(), cfg_.B,
                           cfg_.T, cfg_.V, cfg_.Vp, options);
  return mean_loss();
}

template <class ExecSpace, class T>
double Gpt2Backward<ExecSpace, T>::mean_loss() const {
  double sum = 0;
  for (double x : losses()) sum += x;
  return sum / double(cfg_.B * cfg_.T);
}

template <class ExecSpace, class T>
void Gpt2Backward<ExecSpace, T>::run(StepClock* clock) {
  const index_t L = cfg_.L, B = cfg_.B, T_ = cfg_.T, C = cfg_.C, NH = cfg_.NH, BT = B * T_;
  const auto mm = matmul_options(impls_);
  const auto ln_start = layernorm_options(llmk::Update::overwrite, impls_);
  const auto ln_add = layernorm_options(llmk::Update::accumulate, impls_);
  // dqkv is a fresh gradient (overwritten, as llm.c's), unlike the residual
  // stream's, which each layer adds to.
  llmk::AttentionBackwardOptions att_options;
  att_options.impl = impls_.attention;
  att_options.dqkv_update = llmk::Update::overwrite;
  auto& p = params_;
  auto& g = grads_;
  auto& a = acts_;
  if (clock) {
    exec_.fence();
    clock->timer.reset();
  }

  if (runs(clock, Step::classifier)) classifier();
  lap(clock, Step::classifier);
  T* dlogits = a.logits.data();
  // The LM head, weight-tied: its weight is wte, its dweight wte's gradient
  // (overwritten here; the encoder adds its part last). No bias.
  if (runs(clock, Step::lm_head))
    llmk::matmul_backward(ctx_, dl_btc_.data(), g.wte.data(), nullptr, dlogits, a.lnf.data(),
                          p.wte.data(), B, T_, C, cfg_.Vp, mm);
  lap(clock, Step::lm_head);
  T* last_residual = a.residual3.data() + (L - 1) * BT * C;
  if (runs(clock, Step::layernorm))
    llmk::layernorm_backward(ctx_, dresidual_.data(), g.lnfw.data(), g.lnfb.data(),
                             dl_btc_.data(), last_residual, p.lnfw.data(), a.lnf_mean.data(),
                             a.lnf_rstd.data(), B, T_, C, ln_start);
  lap(clock, Step::layernorm);
  bucket_done(0);

  for (index_t l = L - 1; l >= 0; --l) {
    // Layer l's slice of a stacked (L, ...) buffer of `per_layer` elements a layer.
    const auto at = [l](const auto& stacked, index_t per_layer) {
      return stacked.data() + l * per_layer;
    };
    const index_t BTC = BT * C;
    T* residual = l == 0 ? a.encoded.data() : a.residual3.data() + (l - 1) * BTC;
    // MLP: fcproj (its input is gelu(fch): GELU's backward fused), fc, ln2.
    if (runs(clock, Step::fcproj_gelu))
      llmk::matmul_backward(ctx_, dl_bt4c_.data(), at(g.fcprojw, 4 * C * C), at(g.fcprojb, C),
                            dresidual_.data(), at(a.fch_gelu, 4 * BTC), at(p.fcprojw, 4 * C * C),
                            at(a.fch, 4 * BTC), B, T_, 4 * C, C, mm);
    lap(clock, Step::fcproj_gelu);
    if (runs(clock, Step::fc))
      llmk::matmul_backward(ctx_, dl_btc_.data(), at(g.fcw, 4 * C * C), at(g.fcb, 4 * C),
                            dl_bt4c_.data(), at(a.ln2, BTC), at(p.fcw, 4 * C * C), B, T_, C, 4 * C,
                            mm);
    lap(clock, Step::fc);
    if (runs(clock, Step::layernorm))
      llmk::layernorm_backward(ctx_, dresidual_.data(), at(g.ln2w, C), at(g.ln2b, C),
                               dl_btc_.data(), at(a.residual2, BTC), at(p.ln2w, C),
                               at(a.ln2_mean, BT), at(a.ln2_rstd, BT), B, T_, C, ln_add);
    lap(clock, Step::layernorm);
    // Attention: attproj, the attention itself (dqkv into the 4C scratch), qkv, ln1.
    if (runs(clock, Step::attproj))
      llmk::matmul_backward(ctx_, dl_btc_.data(), at(g.attprojw, C * C), at(g.attprojb, C),
                            dresidual_.data(), at(a.atty, BTC), at(p.attprojw, C * C), B, T_, C,
                            C, mm);
    lap(clock, Step::attproj);
    if (runs(clock, Step::attention) && materialized_) {
      llmk::attention_backward(ctx_, dl_bt4c_.data(), dl_btc_.data(), at(a.qkv, 3 * BTC),
                               at(a.att, B * NH * T_ * T_), B, T_, C, NH, att_options);
    } else if (runs(clock, Step::attention)) {
      llmk::attention_backward_recompute(ctx_, dl_bt4c_.data(), dl_btc_.data(),
                                         at(a.qkv, 3 * BTC), at(a.atty, BTC),
                                         at(a.lse, B * NH * T_), B, T_, C, NH, att_options);
    }
    lap(clock, Step::attention);
    if (runs(clock, Step::qkv))
      llmk::matmul_backward(ctx_, dl_btc_.data(), at(g.qkvw, 3 * C * C), at(g.qkvb, 3 * C),
                            dl_bt4c_.data(), at(a.ln1, BTC), at(p.qkvw, 3 * C * C), B, T_, C, 3 * C,
                            mm);
    lap(clock, Step::qkv);
    if (runs(clock, Step::layernorm))
      llmk::layernorm_backward(ctx_, dresidual_.data(), at(g.ln1w, C), at(g.ln1b, C),
                               dl_btc_.data(), residual, at(p.ln1w, C), at(a.ln1_mean, BT),
                               at(a.ln1_rstd, BT), B, T_, C, ln_add);
    lap(clock, Step::layernorm);
    bucket_done(int(L - l));
  }
  // dresidual is now the input embedding's gradient (wte[tokens] + wpe):
  // added to wte's (the LM head's part), wpe's overwritten.
  // The tokens were checked when they were loaded (model.cpp): no wait for
  // the device's check here either.
  llmk::EncoderBackwardOptions encoder_options;
  encoder_options.dwpe_update = llmk::Update::overwrite;
  encoder_options.check_tokens = false;
  encoder_options.impl = impls_.encoder;
  if (runs(clock, Step::encoder))
    llmk::encoder_backward(ctx_, g.wte.data(), g.wpe.data(), dresidual_.data(), tokens_.data(), B,
                           T_, C, cfg_.V, encoder_options);
  lap(clock, Step::encoder);
  if (reducer_) {
    bucket_done(int(L + 1));
    if (!overlap_) {
      for (int b = 0; b < reducer_->buckets(); ++b) reducer_->ready(b);
    }
    reducer_->wait();
  }
}

template <class ExecSpace, class T>
void Gpt2Backward<ExecSpace, T>::reduce_gradients(llmk::GradientReducer<ExecSpace>* reducer,
                                                  bool overlap) {
  reducer_ = reducer;
  overlap_ = overlap;
  if (!reducer || reducer->buckets() == int(cfg_.L + 2)) return;
  if (reducer->buckets() != 0) {
    throw std::invalid_argument("reduce_gradients: the reducer has other buckets");
  }
  const index_t L = cfg_.L, C = cfg_.C;
  auto& g = grads_;
  reducer->add_bucket({llmk::gradient("lnfw", g.lnfw), llmk::gradient("lnfb", g.lnfb)});
  for (index_t l = L - 1; l >= 0; --l) {
    const auto at = [l](const auto& stacked, index_t per_layer, const char* name) {
      return llmk::gradient(std::string(name) + "[" + std::to_string(l) + "]",
                            stacked.data() + l * per_layer, std::size_t(per_layer));
    };
    reducer->add_bucket({at(g.ln1w, C, "ln1w"), at(g.ln1b, C, "ln1b"),
                         at(g.qkvw, 3 * C * C, "qkvw"), at(g.qkvb, 3 * C, "qkvb"),
                         at(g.attprojw, C * C, "attprojw"), at(g.attprojb, C, "attprojb"),
                         at(g.ln2w, C, "ln2w"), at(g.ln2b, C, "ln2b"),
                         at(g.fcw, 4 * C * C, "fcw"), at(g.fcb, 4 * C, "fcb"),
                         at(g.fcprojw, 4 * C * C, "fcprojw"), at(g.fcprojb, C, "fcprojb")});
  }
  reducer->add_bucket({llmk::gradient("wte", g.wte), llmk::gradient("wpe", g.wpe)});
}

template <class ExecSpace, class T>
Doubles Gpt2Backward<ExecSpace, T>::gradients() const {
  exec_.fence();
  Doubles out;
  auto grads = grads_;  // for_each is not const; the copy shares the buffers
  grads.for_each([&](const char* name, auto& b) { out[std::string("grad.") + name] = download(b); });
  out["grad.encoded"] = download(dresidual_);
  return out;
}

template <class ExecSpace, class T>
std::vector<double> Gpt2Backward<ExecSpace, T>::losses() const {
  exec_.fence();
  return download(losses_);
}

template class Gpt2Backward<Kokkos::DefaultExecutionSpace, float>;
template class Gpt2Backward<Kokkos::DefaultExecutionSpace, llmk::bf16>;

}  // namespace gpt2
