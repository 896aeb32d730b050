// The entry points of the encoder backward: the declared call
// (core/op/entry.hpp over op.hpp), its queries, and their instantiations for
// every space.
#include <core/op/queries.hpp>
#include <core/spaces.hpp>
#include <ops/encoder_backward/op.hpp>

namespace llmk {

using op::encoder_backward::Op;
using op::encoder_backward::Sizes;

template <class ExecSpace>
std::size_t encoder_backward_workspace_bytes(index_t B, index_t T, index_t C, index_t V,
                                             const EncoderBackwardOptions& options,
                                             std::string_view precision) {
  return core::op::workspace_bytes<Op, ExecSpace>(Sizes{B * T, C, T, V}, options.impl,
                                                  Math::fp32, precision);
}

// --- the entry points ---------------------------------------------------------

template <class ExecSpace>
void encoder_backward(Context<ExecSpace>& ctx, const Out<ExecSpace>& dwte,
                      const Out<ExecSpace>& dwpe, const In<ExecSpace>& dout,
                      const TokensView<typename detail::NoDeduce<ExecSpace>::type>& tokens,
                      const EncoderBackwardOptions& options) {
  core::op::call<Op>(ctx, options, std::array<core::op::Operand, 4>{dwte, dwpe, dout, tokens});
}

template <class ExecSpace>
void encoder_backward(Context<ExecSpace>& ctx, BufferRef dwte, BufferRef dwpe,
                      ConstBufferRef dout, const int* tokens, index_t B, index_t T, index_t C,
                      index_t V, const EncoderBackwardOptions& options) {
  core::op::check_dimensions(Op::name, {{"B", B}, {"T", T}, {"C", C}, {"V", V}});
  const index_t M = core::checked_product(B, T, Op::name, "M = B·T");
  core::checked_product(M, C, Op::name, "the elements of dout, M·C");
  core::checked_product(V, C, Op::name, "the elements of dwte, V·C");
  core::checked_product(T, C, Op::name, "the elements of dwpe, T·C");
  encoder_backward(ctx, Out<ExecSpace>(dwte, {V, C}), Out<ExecSpace>(dwpe, {T, C}),
                   In<ExecSpace>(dout, {B, T, C}), TokensView<ExecSpace>(tokens, B, T), options);
}

LLMK_DEFINE_QUERIES(EncoderBackward, ::llmk::op::encoder_backward::Op)

#define LLMK_INSTANTIATE_ENCODER_BACKWARD(Space)                                              \
  template std::size_t encoder_backward_workspace_bytes<Space>(                                 \
      index_t, index_t, index_t, index_t, const EncoderBackwardOptions&, std::string_view);     \
  template void encoder_backward<Space>(Context<Space>&, const Out<Space>&, const Out<Space>&,  \
                                        const In<Space>&, const TokensView<Space>&,             \
                                        const EncoderBackwardOptions&);                         \
  template void encoder_backward<Space>(Context<Space>&, BufferRef, BufferRef, ConstBufferRef,  \
                                        const int*, index_t, index_t, index_t, index_t,         \
                                        const EncoderBackwardOptions&);
LLMK_FOR_EACH_SPACE(LLMK_INSTANTIATE_ENCODER_BACKWARD)

}  // namespace llmk
