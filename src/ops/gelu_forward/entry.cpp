// The entry points of the GELU forward: the declared call (core/op/entry.hpp
// over op.hpp), its queries, and their instantiations for every space.
#include <core/op/queries.hpp>
#include <core/spaces.hpp>
#include <ops/gelu_forward/op.hpp>

namespace llmk {

using op::gelu_forward::Op;

template <class ExecSpace>
std::size_t gelu_forward_workspace_bytes(index_t N, const GeluForwardOptions& options,
                                         std::string_view precision) {
  return core::op::workspace_bytes<Op, ExecSpace>({N, 1}, options.impl, Math::fp32, precision);
}

template <class ExecSpace>
void gelu_forward(Context<ExecSpace>& ctx, const Out<ExecSpace>& out, const In<ExecSpace>& inp,
                  const GeluForwardOptions& options) {
  core::op::call<Op>(ctx, options, std::array<core::op::Operand, 2>{out, inp});
}

// N elements as N rows of one, bounded before any reference is made of them.
template <class ExecSpace>
void gelu_forward(Context<ExecSpace>& ctx, BufferRef out, ConstBufferRef inp, index_t N,
                  const GeluForwardOptions& options) {
  core::op::check_dimensions(Op::name, {{"N", N}});
  core::checked_product(1, N, Op::name, "the elements of out and inp, 1·N");
  gelu_forward(ctx, Out<ExecSpace>(out, {N, 1}), In<ExecSpace>(inp, {N, 1}), options);
}

LLMK_DEFINE_QUERIES(GeluForward, ::llmk::op::gelu_forward::Op)

#define LLMK_INSTANTIATE_GELU_FORWARD(Space)                                                   \
  template std::size_t gelu_forward_workspace_bytes<Space>(index_t, const GeluForwardOptions&, \
                                                           std::string_view);                  \
  template void gelu_forward<Space>(Context<Space>&, const Out<Space>&, const In<Space>&,      \
                                    const GeluForwardOptions&);                                \
  template void gelu_forward<Space>(Context<Space>&, BufferRef, ConstBufferRef, index_t,       \
                                    const GeluForwardOptions&);
LLMK_FOR_EACH_SPACE(LLMK_INSTANTIATE_GELU_FORWARD)

}  // namespace llmk
