#include "optimizer.hpp"

#include <llmk/adamw.hpp>
#include <llmk/squared_norm.hpp>

#include <cmath>
#include <type_traits>
#include <vector>

namespace gpt2 {

bool decays(const std::string& name) {
  return name == "wte" || name == "wpe" || name == "qkvw" || name == "attprojw" || name == "fcw" ||
         name == "fcprojw";
}

namespace {
template <class T>
constexpr bool has_master = std::is_same_v<T, llmk::bf16>;
}  // namespace

template <class ExecSpace, class T>
Optimizer<ExecSpace, T>::Optimizer(const Config& cfg, const OptimizerSettings& settings,
                                   const Floats& weights)
    : settings_(settings), norm_squared_("gpt2::grad_norm_squared", 1) {
  for (const TensorSpec& s : parameter_specs(cfg)) {
    m_[s.name] = Buffer<ExecSpace, float>("gpt2::adamw_m." + s.name, s.size());  // zeros
    v_[s.name] = Buffer<ExecSpace, float>("gpt2::adamw_v." + s.name, s.size());
    if (!has_master<T>) continue;
    const std::vector<float>& w = weights.at(s.name);
    Buffer<ExecSpace, float> master(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "gpt2::master." + s.name), s.size());
    Kokkos::deep_copy(master, Kokkos::View<const float*, Kokkos::HostSpace>(w.data(), w.size()));
    master_[s.name] = master;
  }
}

template <class ExecSpace, class T>
float Optimizer<ExecSpace, T>::grad_norm(llmk::Context<ExecSpace>& ctx,
                                         ParameterTensors<ExecSpace, float>& grads) {
  llmk::SquaredNormOptions o;
  o.out_update = llmk::Update::overwrite;  // the first tensor's starts the sum
  grads.for_each([&](const char*, Buffer<ExecSpace, float>& g) {
    llmk::squared_norm(ctx, norm_squared_.data(), g.data(), index_t(g.size()), o);
    o.out_update = llmk::Update::accumulate;
  });
  float host = 0;
  Kokkos::deep_copy(ctx.exec(), Kokkos::View<float, Kokkos::HostSpace>(&host),
                    Kokkos::subview(norm_squared_, 0));
  ctx.exec().fence();
  return std::sqrt(host);
}

template <class ExecSpace, class T>
void Optimizer<ExecSpace, T>::step(llmk::Context<ExecSpace>& ctx,
                                   ParameterTensors<ExecSpace, T>& params,
                                   ParameterTensors<ExecSpace, float>& grads, float lr,
                                   std::int64_t t, float norm) {
  llmk::AdamWHyperparams hp;
  hp.lr = lr;
  hp.beta1 = settings_.beta1, hp.beta2 = settings_.beta2, hp.eps = settings_.eps;
  hp.t = t;
  hp.grad_scale = settings_.grad_clip > 0 && norm > settings_.grad_clip
                      ? settings_.grad_clip / norm : 1.0f;
  // bf16 parameters with float gradients (the backward's): adamw's
  // "bf16-fp32grad", with the master weights.
  // The gradients in for_each's order, the parameters' too.
  std::vector<const float*> g;
  grads.for_each([&](const char*, Buffer<ExecSpace, float>& b) { g.push_back(b.data()); });
  std::size_t i = 0;
  params.for_each([&](const char* name, Buffer<ExecSpace, T>& p) {
    hp.weight_decay = decays(name) ? settings_.weight_decay : 0.0f;
    float* master = has_master<T> ? master_.at(name).data() : nullptr;
    llmk::adamw(ctx, llmk::BufferRef(p.data()), llmk::ConstBufferRef(g[i++]),
                m_.at(name).data(), v_.at(name).data(), master, index_t(p.size()), hp);
  });
}

template <class ExecSpace, class T>
Floats Optimizer<ExecSpace, T>::weights(ParameterTensors<ExecSpace, T>& params) const {
  Floats out;
  params.for_each([&](const char* name, Buffer<ExecSpace, T>& p) {
    std::vector<float>& w = out[name];
    w.resize(p.size());
    if (has_master<T>) {
      Kokkos::deep_copy(Kokkos::View<float*, Kokkos::HostSpace>(w.data(), w.size()),
                        master_.at(name));
    } else {
      auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), p);
      for (std::size_t i = 0; i < w.size(); ++i) w[i] = float(host(i));
    }
  });
  return out;
}

template class Optimizer<Kokkos::DefaultExecutionSpace, float>;
template class Optimizer<Kokkos::DefaultExecutionSpace, llmk::bf16>;

}  // namespace gpt2
