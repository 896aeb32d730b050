#include <ops/matmul_backward/onednn.hpp>
#include <core/spaces.hpp>
#include <core/context_state.hpp>

#include "onednn_state.hpp"

#include <type_traits>

namespace llmk::op::matmul_backward {

namespace {

using Type = dnnl::memory::data_type;

template <class T>
constexpr Type dnnl_type() {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, bf16>);
  return std::is_same_v<T, float> ? Type::f32 : Type::bf16;
}

}  // namespace

template <class ExecSpace, class P>
void Onednn::run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
  using In = typename P::in;
  backends::OnednnState& dnnl = call.ctx.template resource<backends::OnednnState>();
  // oneDNN runs on the host's threads, outside the space's queue: earlier
  // work on call.exec may produce the inputs.
  compat::fence(call.exec);
  const std::int64_t M = p.M, C = p.C, OC = p.OC;
  const int threads = dnnl.threads();

  // dinp (M×C) ⟵ dout (M×OC) · weight (OC×C). Without GELU straight into
  // dinp (= or +=, one rounding of the float sum); with GELU through
  // GemmOutput (a float target, then the factor and the update).
  if (p.has_gelu()) {
    const DinpOutput<ExecSpace, P> out(p.dinp, p.overwrite_dinp, true, call.workspace);
    const auto& target = out.target();
    dnnl.run({M, C, OC, std::int64_t(p.dout.stride(0)), 1, std::int64_t(p.weight.stride(0)), 1,
              std::int64_t(target.stride(0)), dnnl_type<In>(), dnnl_type<In>(), Type::f32,
              out.beta() != 0.0f, threads},
             p.dout.data(), p.weight.data(), target.data());
    out.finish(call.exec, p.pre_gelu);
  } else {
    dnnl.run({M, C, OC, std::int64_t(p.dout.stride(0)), 1, std::int64_t(p.weight.stride(0)), 1,
              std::int64_t(p.dinp.stride(0)), dnnl_type<In>(), dnnl_type<In>(),
              dnnl_type<typename P::dinp>(), !p.overwrite_dinp, threads},
             p.dout.data(), p.weight.data(), p.dinp.data());
  }
  // dweight (OC×C) ⟵ doutᵀ (OC×M) · inp (M×C): doutᵀ is dout's memory with
  // its strides swapped.
  dnnl.run({OC, C, M, 1, std::int64_t(p.dout.stride(0)), std::int64_t(p.inp.stride(0)), 1,
            std::int64_t(p.dweight.stride(0)), dnnl_type<In>(), dnnl_type<In>(),
            dnnl_type<typename P::dweight>(), !p.overwrite_dweight, threads},
           p.dout.data(), p.inp.data(), p.dweight.data());
  if (p.has_bias()) run_bias_pass(bias, call, p);
}

#define LLMK_INSTANTIATE_ONEDNN_P(Space, P) \
  template void Onednn::run<Space, P>(Call<Space>&, const Problem<Space, P>&);
#define LLMK_INSTANTIATE_ONEDNN(Space)            \
  LLMK_INSTANTIATE_ONEDNN_P(Space, Fp32)          \
  LLMK_INSTANTIATE_ONEDNN_P(Space, Bf16)          \
  LLMK_INSTANTIATE_ONEDNN_P(Space, Bf16Fp32Grad)
LLMK_FOR_EACH_HOST_SPACE(LLMK_INSTANTIATE_ONEDNN)

}  // namespace llmk::op::matmul_backward
