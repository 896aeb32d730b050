// The entry points of the GELU backward: the declared call (core/op/entry.hpp
// over op.hpp), its queries, and their instantiations for every space.
#include <core/op/queries.hpp>
#include <core/spaces.hpp>
#include <ops/gelu_backward/op.hpp>

namespace llmk {

using op::gelu_backward::Op;

template <class ExecSpace>
std::size_t gelu_backward_workspace_bytes(index_t N, const GeluBackwardOptions& options,
                                          std::string_view precision) {
  return core::op::workspace_bytes<Op, ExecSpace>({N, 1}, options.impl, Math::fp32, precision);
}

template <class ExecSpace>
void gelu_backward(Context<ExecSpace>& ctx, const Out<ExecSpace>& dinp,
                   const In<ExecSpace>& dout, const In<ExecSpace>& inp,
                   const GeluBackwardOptions& options) {
  core::op::call<Op>(ctx, options, std::array<core::op::Operand, 3>{dinp, dout, inp});
}

// N elements as N rows of one, bounded before any reference is made of them.
template <class ExecSpace>
void gelu_backward(Context<ExecSpace>& ctx, BufferRef dinp, ConstBufferRef dout,
                   ConstBufferRef inp, index_t N, const GeluBackwardOptions& options) {
  core::op::check_dimensions(Op::name, {{"N", N}});
  core::checked_product(1, N, Op::name, "the elements of dout, inp and dinp, 1·N");
  gelu_backward(ctx, Out<ExecSpace>(dinp, {N, 1}), In<ExecSpace>(dout, {N, 1}),
                In<ExecSpace>(inp, {N, 1}), options);
}

LLMK_DEFINE_QUERIES(GeluBackward, ::llmk::op::gelu_backward::Op)

#define LLMK_INSTANTIATE_GELU_BACKWARD(Space)                                                   \
  template std::size_t gelu_backward_workspace_bytes<Space>(index_t, const GeluBackwardOptions&, \
                                                            std::string_view);                   \
  template void gelu_backward<Space>(Context<Space>&, const Out<Space>&, const In<Space>&,       \
                                     const In<Space>&, const GeluBackwardOptions&);              \
  template void gelu_backward<Space>(Context<Space>&, BufferRef, ConstBufferRef, ConstBufferRef, \
                                     index_t, const GeluBackwardOptions&);
LLMK_FOR_EACH_SPACE(LLMK_INSTANTIATE_GELU_BACKWARD)

}  // namespace llmk
