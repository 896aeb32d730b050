// The entry points of the residual forward: the declared call
// (core/op/entry.hpp over op.hpp), its queries, and their instantiations for
// every space.
#include <core/op/queries.hpp>
#include <core/spaces.hpp>
#include <ops/residual_forward/op.hpp>

namespace llmk {

using op::residual_forward::Op;

template <class ExecSpace>
std::size_t residual_forward_workspace_bytes(index_t N, const ResidualForwardOptions& options,
                                             std::string_view precision) {
  return core::op::workspace_bytes<Op, ExecSpace>({N, 1}, options.impl, Math::fp32, precision);
}

template <class ExecSpace>
void residual_forward(Context<ExecSpace>& ctx, const Out<ExecSpace>& out,
                      const In<ExecSpace>& inp1, const In<ExecSpace>& inp2,
                      const ResidualForwardOptions& options) {
  core::op::call<Op>(ctx, options, std::array<core::op::Operand, 3>{out, inp1, inp2});
}

// N elements as N rows of one, bounded before any reference is made of them.
template <class ExecSpace>
void residual_forward(Context<ExecSpace>& ctx, BufferRef out, ConstBufferRef inp1,
                      ConstBufferRef inp2, index_t N, const ResidualForwardOptions& options) {
  core::op::check_dimensions(Op::name, {{"N", N}});
  core::checked_product(1, N, Op::name, "the elements of out, inp1 and inp2, 1·N");
  residual_forward(ctx, Out<ExecSpace>(out, {N, 1}), In<ExecSpace>(inp1, {N, 1}),
                   In<ExecSpace>(inp2, {N, 1}), options);
}

LLMK_DEFINE_QUERIES(ResidualForward, ::llmk::op::residual_forward::Op)

#define LLMK_INSTANTIATE_RESIDUAL_FORWARD(Space)                                              \
  template std::size_t residual_forward_workspace_bytes<Space>(                               \
      index_t, const ResidualForwardOptions&, std::string_view);                              \
  template void residual_forward<Space>(Context<Space>&, const Out<Space>&, const In<Space>&, \
                                        const In<Space>&, const ResidualForwardOptions&);     \
  template void residual_forward<Space>(Context<Space>&, BufferRef, ConstBufferRef,           \
                                        ConstBufferRef, index_t, const ResidualForwardOptions&);
LLMK_FOR_EACH_SPACE(LLMK_INSTANTIATE_RESIDUAL_FORWARD)

}  // namespace llmk
