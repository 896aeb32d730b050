// The AdamW step as the shared framework sees it (core/op/): its declaration
// (spec.hpp), the hyperparameters' checks, its typed problem and its one
// implementation, "fused": each element's whole update in one pass over its
// five arrays (llm.c's adamw_kernel3), a thread per element on a GPU (every
// access coalesced; the step is bound by its 22 to 36 bytes per element),
// vectorized blocks on a host (host_blocks.hpp).
#pragma once

#include <core/op/call.hpp>
#include <core/op/entry.hpp>
#include <core/op/impl_traits.hpp>
#include <core/registry.hpp>
#include <kernels/host_blocks.hpp>
#include <llmk/compat.hpp>
#include <ops/adamw/spec.hpp>

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace llmk::op::adamw {

// A step's values as the kernel uses them: the bias corrections as factors.
struct Step {
  float lr, beta1, beta2, eps, weight_decay, grad_scale;
  float m_correction, v_correction;  // 1 / (1 − beta^t)
  const float* norm_squared;         // clipping on the device: nullptr or one float
  float max_norm;
};

// The gradients' factor: grad_scale, times llm.c's clipping factor where the
// norm comes from the device (one float every thread reads: a broadcast from
// cache on a GPU, once per block on a host).
KOKKOS_INLINE_FUNCTION float gradient_factor(const Step& s) {
  if (!s.norm_squared) return s.grad_scale;
  const float norm = compat::sqrt(*s.norm_squared);
  return norm > s.max_norm ? s.grad_scale * (s.max_norm / norm) : s.grad_scale;
}

// One element's update (see llmk/adamw.hpp), in float. Master: whether
// master weights are given (a template argument: the host loop has no branch).
template <bool Master, class T, class G>
KOKKOS_INLINE_FUNCTION void update_element(T* params, const G* grads, float* m, float* v,
                                           float* master, const Step& s, float scale,
                                           const index_t i) {
  const float g = scale * to_float(grads[i]);
  const float mi = s.beta1 * m[i] + (1.0f - s.beta1) * g;
  const float vi = s.beta2 * v[i] + (1.0f - s.beta2) * (g * g);
  m[i] = mi;
  v[i] = vi;
  const float p = Master ? master[i] : to_float(params[i]);
  const float update = (mi * s.m_correction) / (compat::sqrt(vi * s.v_correction) + s.eps);
  const float next = p - s.lr * (update + s.weight_decay * p);
  params[i] = from_float<T>(next);
  if (Master) master[i] = next;
}

struct Sizes {
  index_t M = 0;  // parameters
};

template <class ExecSpace, class P>
struct Problem {
  using precision = P;
  using T = typename P::in;
  using G = typename P::grad;
  template <class U>
  using Vector = Kokkos::View<U*, Kokkos::LayoutRight, typename ExecSpace::device_type,
                              Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Vector<T> params;
  Vector<const G> grads;
  Vector<float> m, v, master;  // master empty: none
  Step step{};
  index_t M = 0;

  Sizes sizes() const { return {M}; }
  Problem rows(index_t m0, index_t count) const {
    const std::pair<index_t, index_t> r(m0, m0 + count);
    Problem p = *this;
    p.params = Kokkos::subview(params, r);
    p.grads = Kokkos::subview(grads, r);
    p.m = Kokkos::subview(m, r);
    p.v = Kokkos::subview(v, r);
    if (master.data()) p.master = Kokkos::subview(master, r);
    p.M = count;
    return p;
  }
};

template <bool Master, class ExecSpace, class P>
void run_fused(const ExecSpace& exec, const Problem<ExecSpace, P>& p) {
  using T = typename P::in;
  using G = typename P::grad;
  T* const params = p.params.data();
  const G* const grads = p.grads.data();
  float *const m = p.m.data(), *const v = p.v.data(), *const master = p.master.data();
  const Step s = p.step;
  if constexpr (compat::is_host_space<ExecSpace>) {
    kernels::for_each_block("llmk::adamw_fused", exec, p.M, [=](index_t i0, index_t i1) {
      const float scale = gradient_factor(s);
      LLMK_SIMD
      for (index_t i = i0; i < i1; ++i)
        update_element<Master>(params, grads, m, v, master, s, scale, i);
    });
  } else {
    Kokkos::parallel_for(
        "llmk::adamw_fused", Range<ExecSpace>(exec, 0, p.M), KOKKOS_LAMBDA(const index_t i) {
          update_element<Master>(params, grads, m, v, master, s, gradient_factor(s), i);
        });
  }
}

struct Fused : core::op::AnyPrecisionNoWorkspace {
  static constexpr std::string_view name = "fused";
  template <class ExecSpace, class Options, class Problem>
  static void run(core::op::Call<ExecSpace, Options>& call, const Problem& p) {
    if (p.master.data())
      run_fused<true>(call.exec, p);
    else
      run_fused<false>(call.exec, p);
  }
};

using Implementations = core::ImplList<Fused>;

struct Op : Spec, core::op::OpDefaults {
  using Implementations = adamw::Implementations;
  using Sizes = adamw::Sizes;

  static core::op::SizeLimits limits(const Sizes&) { return {1, {}, {"", 0}}; }
  static bool is_empty(const Sizes& s) { return s.M == 0; }

  // The hyperparameters' ranges (llmk/adamw.hpp), before anything is written.
  template <class ExecSpace, std::size_t N>
  static void check(const core::op::BoundCall<ExecSpace, N>& b, const AdamWHyperparams& hp) {
    const auto refuse = [](const char* what, double value, const char* expected) {
      throw std::invalid_argument(std::string(name) + ": hyperparameter '" + what + "' = " +
                                  std::to_string(value) + " but " + expected + " was expected");
    };
    const auto non_negative = [&](const char* what, float x) {
      if (!(std::isfinite(x) && x >= 0.0f)) refuse(what, x, "a finite value >= 0");
    };
    non_negative("lr", hp.lr);
    non_negative("weight_decay", hp.weight_decay);
    non_negative("grad_scale", hp.grad_scale);
    for (const auto& [what, beta] : {std::pair{"beta1", hp.beta1}, std::pair{"beta2", hp.beta2}})
      if (!(beta >= 0.0f && beta < 1.0f)) refuse(what, beta, "a value in [0, 1)");
    if (!(std::isfinite(hp.eps) && hp.eps > 0.0f)) refuse("eps", hp.eps, "a finite value > 0");
    if (hp.t < 1) refuse("t", double(hp.t), "a step number >= 1");
    if (hp.grad_norm_squared) check_norm_on_device<ExecSpace>(b, hp);
  }

  // The device's norm: a positive bound, one float the kernel can read that
  // no array overlaps (it is read while they are written).
  template <class ExecSpace, std::size_t N>
  static void check_norm_on_device(const core::op::BoundCall<ExecSpace, N>& b,
                                   const AdamWHyperparams& hp) {
    if (!(std::isfinite(hp.max_grad_norm) && hp.max_grad_norm > 0.0f))
      throw std::invalid_argument(std::string(name) + ": hyperparameter 'max_grad_norm' = " +
                                  std::to_string(hp.max_grad_norm) +
                                  " but a finite value > 0 was expected (with grad_norm_squared)");
    const detail::ArgInfo norm{"grad_norm_squared", hp.grad_norm_squared, sizeof(float), 1,
                               {1, 0, 0, 0}, true, false};
    detail::check_memory_space<ExecSpace>(name, {norm});
    const auto* at = static_cast<const char*>(norm.data);
    for (const detail::ArgInfo& a : b.checked) {
      const auto* begin = static_cast<const char*>(a.data);
      if (a.bytes > 0 && at + sizeof(float) > begin && at < begin + a.bytes)
        throw std::invalid_argument(std::string(name) +
                                    ": hyperparameter 'grad_norm_squared' points into argument '" +
                                    a.name + "', but it must be apart from every array");
    }
  }

  template <class ExecSpace, class P, class Bound>
  static Problem<ExecSpace, P> problem(const Bound& b, const Options&, const AdamWHyperparams& hp) {
    Problem<ExecSpace, P> p;
    p.params = b.template vector<typename P::in>(params);
    p.grads = b.template vector<const typename P::grad>(grads);
    p.m = b.template vector<float>(m);
    p.v = b.template vector<float>(v);
    p.master = b.template vector<float>(master);
    // The bias corrections in double: beta^t of a large t underflows to 0,
    // and the correction to 1, as it should.
    const auto correction = [&](float beta) {
      return float(1.0 / (1.0 - std::pow(double(beta), double(hp.t))));
    };
    p.step = {hp.lr,
              hp.beta1,
              hp.beta2,
              hp.eps,
              hp.weight_decay,
              hp.grad_scale,
              correction(hp.beta1),
              correction(hp.beta2),
              hp.grad_norm_squared,
              hp.max_grad_norm};
    p.M = b.rows();
    return p;
  }
};

}  // namespace llmk::op::adamw
