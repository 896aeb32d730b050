// The entry points of the matmul forward: the declared call
// (core/op/entry.hpp over op.hpp), its queries, and their instantiations for
// every space.
#include <core/op/queries.hpp>
#include <core/spaces.hpp>
#include <ops/matmul_forward/op.hpp>

namespace llmk {

using op::matmul_forward::Op;

template <class ExecSpace>
std::size_t matmul_forward_workspace_bytes(index_t M, index_t C, index_t OC, bool has_gelu,
                                           const MatmulForwardOptions& options,
                                           std::string_view precision) {
  return core::op::workspace_bytes<Op, ExecSpace>({M, C, OC, has_gelu}, options.impl, Math::fp32,
                                                  precision);
}

template <class ExecSpace>
void matmul_forward(Context<ExecSpace>& ctx, const Out<ExecSpace>& out,
                    const Out<ExecSpace>& pre_gelu, const In<ExecSpace>& inp,
                    const In<ExecSpace>& weight, const In<ExecSpace>& bias,
                    const MatmulForwardOptions& options) {
  core::op::call<Op>(ctx, options,
                     std::array<core::op::Operand, 5>{out, pre_gelu, inp, weight, bias});
}

template <class ExecSpace>
void matmul_forward(Context<ExecSpace>& ctx, BufferRef out, BufferRef pre_gelu,
                    ConstBufferRef inp, ConstBufferRef weight, ConstBufferRef bias, index_t B,
                    index_t T, index_t C, index_t OC, const MatmulForwardOptions& options) {
  core::op::check_dimensions(Op::name, {{"B", B}, {"T", T}, {"C", C}, {"OC", OC}});
  // Every array's element count, checked before any reference is made of it.
  const index_t M = core::checked_product(B, T, Op::name, "M = B·T");
  core::checked_product(M, C, Op::name, "the elements of inp, M·C");
  core::checked_product(M, OC, Op::name, "the elements of out and pre_gelu, M·OC");
  core::checked_product(OC, C, Op::name, "the elements of weight, OC·C");
  core::checked_product(1, OC, Op::name, "the elements of bias, 1·OC");
  // Null pre_gelu: no GELU; null bias: no bias.
  matmul_forward(ctx, Out<ExecSpace>(out, {M, OC}),
                 pre_gelu.data ? Out<ExecSpace>(pre_gelu, {M, OC}) : Out<ExecSpace>(),
                 In<ExecSpace>(inp, {M, C}), In<ExecSpace>(weight, {OC, C}),
                 bias.data ? In<ExecSpace>(bias, {OC}) : In<ExecSpace>(), options);
}

LLMK_DEFINE_QUERIES(MatmulForward, ::llmk::op::matmul_forward::Op)

#define LLMK_INSTANTIATE_MATMUL_FORWARD(Space)                                                 \
  template std::size_t matmul_forward_workspace_bytes<Space>(                                  \
      index_t, index_t, index_t, bool, const MatmulForwardOptions&, std::string_view);         \
  template void matmul_forward<Space>(Context<Space>&, const Out<Space>&, const Out<Space>&,    \
                                      const In<Space>&, const In<Space>&, const In<Space>&,    \
                                      const MatmulForwardOptions&);                            \
  template void matmul_forward<Space>(Context<Space>&, BufferRef, BufferRef, ConstBufferRef,   \
                                      ConstBufferRef, ConstBufferRef, index_t, index_t, index_t, \
                                      index_t, const MatmulForwardOptions&);
LLMK_FOR_EACH_SPACE(LLMK_INSTANTIATE_MATMUL_FORWARD)

}  // namespace llmk
