// The entry points of the encoder forward: the declared call
// (core/op/entry.hpp over op.hpp), its queries, and their instantiations for
// every space.
#include <core/op/queries.hpp>
#include <core/spaces.hpp>
#include <ops/encoder_forward/op.hpp>

namespace llmk {

using op::encoder_forward::Op;
using op::encoder_forward::Sizes;

template <class ExecSpace>
std::size_t encoder_forward_workspace_bytes(index_t B, index_t T, index_t C, index_t V,
                                            const EncoderForwardOptions& options,
                                            std::string_view precision) {
  return core::op::workspace_bytes<Op, ExecSpace>(Sizes{B * T, C, T, V}, options.impl,
                                                  Math::fp32, precision);
}

template <class ExecSpace>
void encoder_forward(Context<ExecSpace>& ctx, const Out<ExecSpace>& out,
                     const TokensView<typename detail::NoDeduce<ExecSpace>::type>& tokens,
                     const In<ExecSpace>& wte, const In<ExecSpace>& wpe,
                     const EncoderForwardOptions& options) {
  core::op::call<Op>(ctx, options, std::array<core::op::Operand, 4>{out, tokens, wte, wpe});
}

template <class ExecSpace>
void encoder_forward(Context<ExecSpace>& ctx, BufferRef out, const int* tokens,
                     ConstBufferRef wte, ConstBufferRef wpe, index_t B, index_t T, index_t C,
                     index_t V, const EncoderForwardOptions& options) {
  core::op::check_dimensions(Op::name, {{"B", B}, {"T", T}, {"C", C}, {"V", V}});
  const index_t M = core::checked_product(B, T, Op::name, "M = B·T");
  core::checked_product(M, C, Op::name, "the elements of out, M·C");
  core::checked_product(V, C, Op::name, "the elements of wte, V·C");
  core::checked_product(T, C, Op::name, "the elements of wpe, T·C");
  encoder_forward(ctx, Out<ExecSpace>(out, {B, T, C}), TokensView<ExecSpace>(tokens, B, T),
                  In<ExecSpace>(wte, {V, C}), In<ExecSpace>(wpe, {T, C}), options);
}

LLMK_DEFINE_QUERIES(EncoderForward, ::llmk::op::encoder_forward::Op)

#define LLMK_INSTANTIATE_ENCODER_FORWARD(Space)                                                \
  template std::size_t encoder_forward_workspace_bytes<Space>(                                   \
      index_t, index_t, index_t, index_t, const EncoderForwardOptions&, std::string_view);       \
  template void encoder_forward<Space>(Context<Space>&, const Out<Space>&,                       \
                                       const TokensView<Space>&, const In<Space>&,               \
                                       const In<Space>&, const EncoderForwardOptions&);          \
  template void encoder_forward<Space>(Context<Space>&, BufferRef, const int*, ConstBufferRef,   \
                                       ConstBufferRef, index_t, index_t, index_t, index_t,       \
                                       const EncoderForwardOptions&);
LLMK_FOR_EACH_SPACE(LLMK_INSTANTIATE_ENCODER_FORWARD)

}  // namespace llmk
