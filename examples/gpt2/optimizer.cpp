#include "optimizer.hpp"

#include <llmk/adamw.hpp>
#include <llmk/squared_norm.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace gpt2 {

namespace {
template <class T>
constexpr bool has_master = std::is_same_v<T, llmk::bf16>;

template <class View>
View range(const View& all, index_t begin, index_t end) {
  return Kokkos::subview(all, std::pair<index_t, index_t>(begin, end));
}
}  // namespace

template <class ExecSpace, class T>
Optimizer<ExecSpace, T>::Optimizer(const Config& cfg, const OptimizerSettings& settings,
                                   const Floats& weights)
    : cfg_(cfg),
      layout_(parameter_layout(cfg)),
      settings_(settings),
      m_("gpt2::adamw_m", layout_.total),  // zeros
      v_("gpt2::adamw_v", layout_.total),
      norm_squared_("gpt2::grad_norm_squared", 1) {
  if (!has_master<T>) return;
  master_ = Buffer<ExecSpace, float>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "gpt2::master"), layout_.total);
  const std::vector<TensorSpec> specs = parameter_specs(cfg);
  auto host = Kokkos::create_mirror_view(master_);
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const std::vector<float>& w = weights.at(specs[i].name);
    if (index_t(w.size()) != specs[i].size())
      throw std::invalid_argument("weights: " + specs[i].name + " has " +
                                  std::to_string(w.size()) + " values, expected " +
                                  std::to_string(specs[i].size()));
    std::copy(w.begin(), w.end(), host.data() + layout_.offset[i]);
  }
  Kokkos::deep_copy(master_, host);
}

template <class ExecSpace, class T>
void Optimizer<ExecSpace, T>::step(llmk::Context<ExecSpace>& ctx,
                                   ParameterTensors<ExecSpace, T>& params,
                                   ParameterTensors<ExecSpace, float>& grads, float lr,
                                   std::int64_t t) {
  llmk::squared_norm(ctx, norm_squared_.data(), grads.all.data(), layout_.total);
  llmk::AdamWHyperparams hp;
  hp.lr = lr;
  hp.beta1 = settings_.beta1, hp.beta2 = settings_.beta2, hp.eps = settings_.eps;
  hp.t = t;
  if (settings_.grad_clip > 0) {
    hp.grad_norm_squared = norm_squared_.data();
    hp.max_grad_norm = settings_.grad_clip;
  }
  // bf16 parameters with float gradients (the backward's): adamw's
  // "bf16-fp32grad", with the master weights.
  for (const bool matrices : {true, false}) {
    const index_t begin = matrices ? 0 : layout_.decaying;
    const index_t end = matrices ? layout_.decaying : layout_.total;
    hp.weight_decay = matrices ? settings_.weight_decay : 0.0f;
    float* master = has_master<T> ? range(master_, begin, end).data() : nullptr;
    llmk::adamw(ctx, llmk::BufferRef(range(params.all, begin, end).data()),
                llmk::ConstBufferRef(range(grads.all, begin, end).data()),
                range(m_, begin, end).data(), range(v_, begin, end).data(), master,
                end - begin, hp);
  }
}

template <class ExecSpace, class T>
float Optimizer<ExecSpace, T>::grad_norm(llmk::Context<ExecSpace>& ctx) const {
  float host = 0;
  Kokkos::deep_copy(ctx.exec(), Kokkos::View<float, Kokkos::HostSpace>(&host),
                    Kokkos::subview(norm_squared_, 0));
  ctx.exec().fence();
  return std::sqrt(host);
}

template <class ExecSpace, class T>
Floats Optimizer<ExecSpace, T>::weights(ParameterTensors<ExecSpace, T>& params) const {
  const std::vector<TensorSpec> specs = parameter_specs(cfg_);
  Floats out;
  if (has_master<T>) {
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), master_);
    for (std::size_t i = 0; i < specs.size(); ++i) {
      const float* begin = host.data() + layout_.offset[i];
      out[specs[i].name].assign(begin, begin + specs[i].size());
    }
    return out;
  }
  std::size_t i = 0;
  params.for_each([&](const char* name, Buffer<ExecSpace, T>& p) {
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), p);
    std::vector<float>& w = out[name];
    w.resize(std::size_t(specs[i++].size()));
    for (std::size_t j = 0; j < w.size(); ++j) w[j] = float(host(j));
  });
  return out;
}

template class Optimizer<Kokkos::DefaultExecutionSpace, float>;
template class Optimizer<Kokkos::DefaultExecutionSpace, llmk::bf16>;

}  // namespace gpt2
