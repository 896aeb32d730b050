// The entry points of the layer-norm backward: the declared call
// (core/op/entry.hpp over op.hpp), its queries, and their instantiations for
// every space.
#include <core/op/queries.hpp>
#include <core/spaces.hpp>
#include <ops/layernorm_backward/op.hpp>

namespace llmk {

using op::layernorm_backward::Op;
using op::layernorm_backward::Sizes;

template <class ExecSpace>
std::size_t layernorm_backward_workspace_bytes(index_t M, index_t C, bool has_bias,
                                               const LayernormBackwardOptions& options,
                                               std::string_view precision) {
  return core::op::workspace_bytes<Op, ExecSpace>(Sizes{M, C, has_bias}, options.impl,
                                                  Math::fp32, precision);
}

// --- the entry points ---------------------------------------------------------

template <class ExecSpace>
void layernorm_backward(Context<ExecSpace>& ctx, const Out<ExecSpace>& dinp,
                        const Out<ExecSpace>& dweight, const Out<ExecSpace>& dbias,
                        const In<ExecSpace>& dout, const In<ExecSpace>& inp,
                        const In<ExecSpace>& weight, const In<ExecSpace>& mean,
                        const In<ExecSpace>& rstd, const LayernormBackwardOptions& options) {
  core::op::call<Op>(ctx, options, std::array<core::op::Operand, 8>{
                                       dinp, dweight, dbias, dout, inp, weight, mean, rstd});
}

template <class ExecSpace>
void layernorm_backward(Context<ExecSpace>& ctx, BufferRef dinp, BufferRef dweight,
                        BufferRef dbias, ConstBufferRef dout, ConstBufferRef inp,
                        ConstBufferRef weight, const float* mean, const float* rstd, index_t B,
                        index_t T, index_t C, const LayernormBackwardOptions& options) {
  core::op::check_dimensions(Op::name, {{"B", B}, {"T", T}, {"C", C}});
  // Every array's element count, checked before any reference is made of it.
  const index_t M = core::checked_product(B, T, Op::name, "M = B·T");
  core::checked_product(M, C, Op::name, "the elements of dout, inp and dinp, M·C");
  // (weight's C elements are bounded apart: with B·T = 0 the product above is 0.)
  core::checked_product(1, C, Op::name, "the elements of weight, 1·C");
  // A null dbias means "no bias gradient".
  layernorm_backward(ctx, Out<ExecSpace>(dinp, {M, C}), Out<ExecSpace>(dweight, {C}),
                     dbias.data ? Out<ExecSpace>(dbias, {C}) : Out<ExecSpace>(),
                     In<ExecSpace>(dout, {M, C}), In<ExecSpace>(inp, {M, C}),
                     In<ExecSpace>(weight, {C}), In<ExecSpace>(mean, {M}),
                     In<ExecSpace>(rstd, {M}), options);
}

LLMK_DEFINE_QUERIES(LayernormBackward, ::llmk::op::layernorm_backward::Op)

#define LLMK_INSTANTIATE_LAYERNORM_BACKWARD(Space)                                             \
  template std::size_t layernorm_backward_workspace_bytes<Space>(                                \
      index_t, index_t, bool, const LayernormBackwardOptions&, std::string_view);                \
  template void layernorm_backward<Space>(Context<Space>&, const Out<Space>&, const Out<Space>&, \
                                          const Out<Space>&, const In<Space>&, const In<Space>&, \
                                          const In<Space>&, const In<Space>&, const In<Space>&,  \
                                          const LayernormBackwardOptions&);                      \
  template void layernorm_backward<Space>(Context<Space>&, BufferRef, BufferRef, BufferRef,      \
                                          ConstBufferRef, ConstBufferRef, ConstBufferRef,        \
                                          const float*, const float*, index_t, index_t, index_t, \
                                          const LayernormBackwardOptions&);
LLMK_FOR_EACH_SPACE(LLMK_INSTANTIATE_LAYERNORM_BACKWARD)

}  // namespace llmk
