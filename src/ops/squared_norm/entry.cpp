// The entry points of the squared norm: the declared call (core/op/entry.hpp
// over op.hpp), its queries, and their instantiations for every space.
#include <core/op/queries.hpp>
#include <core/spaces.hpp>
#include <ops/squared_norm/op.hpp>

namespace llmk {

using op::squared_norm::Op;

template <class ExecSpace>
std::size_t squared_norm_workspace_bytes(index_t N, const SquaredNormOptions& options,
                                         std::string_view precision) {
  return core::op::workspace_bytes<Op, ExecSpace>({N}, options.impl, Math::fp32, precision);
}

template <class ExecSpace>
void squared_norm(Context<ExecSpace>& ctx, const Out<ExecSpace>& out, const In<ExecSpace>& inp,
                  const SquaredNormOptions& options) {
  core::op::call<Op>(ctx, options, std::array<core::op::Operand, 2>{out, inp});
}

template <class ExecSpace>
void squared_norm(Context<ExecSpace>& ctx, float* out, ConstBufferRef inp, index_t N,
                  const SquaredNormOptions& options) {
  core::op::check_dimensions(Op::name, {{"N", N}});
  core::checked_product(1, N, Op::name, "the elements of inp, 1·N");
  squared_norm(ctx, Out<ExecSpace>(BufferRef(out, DType::f32), {1}), In<ExecSpace>(inp, {N}),
               options);
}

LLMK_DEFINE_QUERIES(SquaredNorm, ::llmk::op::squared_norm::Op)

#define LLMK_INSTANTIATE_SQUARED_NORM(Space)                                                 \
  template std::size_t squared_norm_workspace_bytes<Space>(index_t, const SquaredNormOptions&, \
                                                           std::string_view);                \
  template void squared_norm<Space>(Context<Space>&, const Out<Space>&, const In<Space>&,    \
                                    const SquaredNormOptions&);                              \
  template void squared_norm<Space>(Context<Space>&, float*, ConstBufferRef, index_t,        \
                                    const SquaredNormOptions&);
LLMK_FOR_EACH_SPACE(LLMK_INSTANTIATE_SQUARED_NORM)

}  // namespace llmk
