#include "forward.hpp"

#include <llmk/attention_forward.hpp>
#include <llmk/encoder_forward.hpp>
#include <llmk/layernorm_forward.hpp>
#include <llmk/matmul_forward.hpp>
#include <llmk/residual_forward.hpp>

#include <algorithm>
#include <type_traits>

namespace gpt2 {

namespace {
template <class T>
const char* precision_of() {
  return std::is_same_v<T, llmk::bf16> ? "bf16" : "fp32";
}
}  // namespace

template <class ExecSpace, class T>
std::size_t forward_workspace_bytes(const Config& c) {
  const index_t M = c.B * c.T, C = c.C;
  const char* p = precision_of<T>();
  const llmk::MatmulForwardOptions mm;
  return std::max({llmk::matmul_forward_workspace_bytes<ExecSpace>(M, C, 3 * C, false, mm, p),
                   llmk::matmul_forward_workspace_bytes<ExecSpace>(M, C, C, false, mm, p),
                   llmk::matmul_forward_workspace_bytes<ExecSpace>(M, C, 4 * C, true, mm, p),
                   llmk::matmul_forward_workspace_bytes<ExecSpace>(M, 4 * C, C, false, mm, p),
                   llmk::matmul_forward_workspace_bytes<ExecSpace>(M, C, c.Vp, false, mm, p),
                   llmk::attention_forward_workspace_bytes<ExecSpace>(c.B, c.T, C, c.NH, {}, p)});
}

template <class ExecSpace, class T>
void gpt2_forward(llmk::Context<ExecSpace>& ctx, const Config& cfg,
                  const ParameterTensors<ExecSpace, T>& p, ActivationTensors<ExecSpace, T>& a,
                  const Buffer<ExecSpace, int>& tokens, const Buffer<ExecSpace, T>& scratch) {
  const index_t L = cfg.L, B = cfg.B, T_ = cfg.T, C = cfg.C, NH = cfg.NH, BT = B * T_, BTC = BT * C;
  llmk::EncoderForwardOptions encoder_options;
  encoder_options.check_tokens = false;
  llmk::encoder_forward(ctx, a.encoded.data(), tokens.data(), p.wte.data(), p.wpe.data(), B, T_, C,
                        cfg.V, encoder_options);
  for (index_t l = 0; l < L; ++l) {
    // Layer l's slice of a stacked (L, ...) buffer of `per_layer` elements a layer.
    const auto at = [l](const auto& stacked, index_t per_layer) {
      return stacked.data() + l * per_layer;
    };
    T* residual = l == 0 ? a.encoded.data() : a.residual3.data() + (l - 1) * BTC;
    llmk::layernorm_forward(ctx, at(a.ln1, BTC), at(a.ln1_mean, BT), at(a.ln1_rstd, BT), residual,
                            at(p.ln1w, C), at(p.ln1b, C), B, T_, C);
    llmk::matmul_forward(ctx, at(a.qkv, 3 * BTC), nullptr, at(a.ln1, BTC), at(p.qkvw, 3 * C * C),
                         at(p.qkvb, 3 * C), B, T_, C, 3 * C);
    llmk::attention_forward(ctx, at(a.atty, BTC), at(a.lse, B * NH * T_), at(a.qkv, 3 * BTC), B,
                            T_, C, NH);
    llmk::matmul_forward(ctx, scratch.data(), nullptr, at(a.atty, BTC), at(p.attprojw, C * C),
                         at(p.attprojb, C), B, T_, C, C);
    llmk::residual_forward(ctx, at(a.residual2, BTC), residual, scratch.data(), BTC);
    llmk::layernorm_forward(ctx, at(a.ln2, BTC), at(a.ln2_mean, BT), at(a.ln2_rstd, BT),
                            at(a.residual2, BTC), at(p.ln2w, C), at(p.ln2b, C), B, T_, C);
    // fc with GELU fused: fch (pre-GELU, which the backward reads) and fch_gelu.
    llmk::matmul_forward(ctx, at(a.fch_gelu, 4 * BTC), at(a.fch, 4 * BTC), at(a.ln2, BTC),
                         at(p.fcw, 4 * C * C), at(p.fcb, 4 * C), B, T_, C, 4 * C);
    llmk::matmul_forward(ctx, scratch.data(), nullptr, at(a.fch_gelu, 4 * BTC),
                         at(p.fcprojw, 4 * C * C), at(p.fcprojb, C), B, T_, 4 * C, C);
    llmk::residual_forward(ctx, at(a.residual3, BTC), at(a.residual2, BTC), scratch.data(), BTC);
  }
  llmk::layernorm_forward(ctx, a.lnf.data(), a.lnf_mean.data(), a.lnf_rstd.data(),
                          a.residual3.data() + (L - 1) * BTC, p.lnfw.data(), p.lnfb.data(), B, T_,
                          C);
  // The LM head, weight-tied to wte; no bias.
  llmk::matmul_forward(ctx, a.logits.data(), nullptr, a.lnf.data(), p.wte.data(), nullptr, B, T_,
                       C, cfg.Vp);
}

#define GPT2_FORWARD(T)                                                                          \
  template std::size_t forward_workspace_bytes<Kokkos::DefaultExecutionSpace, T>(const Config&); \
  template void gpt2_forward<Kokkos::DefaultExecutionSpace, T>(                                  \
      llmk::Context<Kokkos::DefaultExecutionSpace>&, const Config&,                             \
      const ParameterTensors<Kokkos::DefaultExecutionSpace, T>&,                                 \
      ActivationTensors<Kokkos::DefaultExecutionSpace, T>&,                                      \
      const Buffer<Kokkos::DefaultExecutionSpace, int>&,                                         \
      const Buffer<Kokkos::DefaultExecutionSpace, T>&);
GPT2_FORWARD(float)
GPT2_FORWARD(llmk::bf16)

}  // namespace gpt2
