// The entry points of the layer-norm forward: the declared call
// (core/op/entry.hpp over op.hpp), its queries, and their instantiations for
// every space.
#include <core/op/queries.hpp>
#include <core/spaces.hpp>
#include <ops/layernorm_forward/op.hpp>

#include <cmath>
#include <stdexcept>
#include <string>

namespace llmk {

using op::layernorm_forward::Op;

template <class ExecSpace>
std::size_t layernorm_forward_workspace_bytes(index_t M, index_t C,
                                              const LayernormForwardOptions& options,
                                              std::string_view precision) {
  return core::op::workspace_bytes<Op, ExecSpace>({M, C}, options.impl, Math::fp32, precision);
}

template <class ExecSpace>
void layernorm_forward(Context<ExecSpace>& ctx, const Out<ExecSpace>& out,
                       const Out<ExecSpace>& mean, const Out<ExecSpace>& rstd,
                       const In<ExecSpace>& inp, const In<ExecSpace>& weight,
                       const In<ExecSpace>& bias, const LayernormForwardOptions& options) {
  if (!(options.eps > 0.0f) || !std::isfinite(options.eps))
    throw std::invalid_argument(std::string(Op::name) +
                                ": options.eps must be a finite number above 0, got " +
                                std::to_string(options.eps));
  core::op::call<Op>(ctx, options,
                     std::array<core::op::Operand, 6>{out, mean, rstd, inp, weight, bias});
}

template <class ExecSpace>
void layernorm_forward(Context<ExecSpace>& ctx, BufferRef out, float* mean, float* rstd,
                       ConstBufferRef inp, ConstBufferRef weight, ConstBufferRef bias, index_t B,
                       index_t T, index_t C, const LayernormForwardOptions& options) {
  core::op::check_dimensions(Op::name, {{"B", B}, {"T", T}, {"C", C}});
  // Every array's element count, checked before any reference is made of it.
  const index_t M = core::checked_product(B, T, Op::name, "M = B·T");
  core::checked_product(M, C, Op::name, "the elements of inp and out, M·C");
  core::checked_product(1, C, Op::name, "the elements of weight, 1·C");
  // A null bias means "no bias".
  layernorm_forward(ctx, Out<ExecSpace>(out, {M, C}), Out<ExecSpace>(BufferRef(mean), {M}),
                    Out<ExecSpace>(BufferRef(rstd), {M}), In<ExecSpace>(inp, {M, C}),
                    In<ExecSpace>(weight, {C}),
                    bias.data ? In<ExecSpace>(bias, {C}) : In<ExecSpace>(), options);
}

LLMK_DEFINE_QUERIES(LayernormForward, ::llmk::op::layernorm_forward::Op)

#define LLMK_INSTANTIATE_LAYERNORM_FORWARD(Space)                                                 \
  template std::size_t layernorm_forward_workspace_bytes<Space>(                                  \
      index_t, index_t, const LayernormForwardOptions&, std::string_view);                        \
  template void layernorm_forward<Space>(Context<Space>&, const Out<Space>&, const Out<Space>&,   \
                                         const Out<Space>&, const In<Space>&, const In<Space>&,   \
                                         const In<Space>&, const LayernormForwardOptions&);       \
  template void layernorm_forward<Space>(Context<Space>&, BufferRef, float*, float*,              \
                                         ConstBufferRef, ConstBufferRef, ConstBufferRef, index_t, \
                                         index_t, index_t, const LayernormForwardOptions&);
LLMK_FOR_EACH_SPACE(LLMK_INSTANTIATE_LAYERNORM_FORWARD)

}  // namespace llmk
