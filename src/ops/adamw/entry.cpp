// The entry points of the AdamW step: the declared call (core/op/entry.hpp
// over op.hpp: extents, storage, types, the hyperparameters), its queries,
// and their instantiations for every space.
#include <core/op/queries.hpp>
#include <core/spaces.hpp>
#include <ops/adamw/op.hpp>

namespace llmk {

using op::adamw::Op;

template <class ExecSpace>
std::size_t adamw_workspace_bytes(index_t N, const AdamWOptions& options,
                                  std::string_view precision) {
  return core::op::workspace_bytes<Op, ExecSpace>({N}, options.impl, Math::fp32, precision);
}

template <class ExecSpace>
void adamw(Context<ExecSpace>& ctx, const Out<ExecSpace>& params, const In<ExecSpace>& grads,
           const Out<ExecSpace>& m, const Out<ExecSpace>& v, const Out<ExecSpace>& master,
           const AdamWHyperparams& hp, const AdamWOptions& options) {
  core::op::call<Op>(ctx, options, std::array<core::op::Operand, 5>{params, grads, m, v, master},
                     hp);
}

template <class ExecSpace>
void adamw(Context<ExecSpace>& ctx, BufferRef params, ConstBufferRef grads, float* m, float* v,
           float* master, index_t N, const AdamWHyperparams& hp, const AdamWOptions& options) {
  core::op::check_dimensions(Op::name, {{"N", N}});
  core::checked_product(1, N, Op::name, "the elements of each array, 1·N");
  const auto f32 = [&](float* p) { return Out<ExecSpace>(BufferRef(p, DType::f32), {N}); };
  adamw(ctx, Out<ExecSpace>(params, {N}), In<ExecSpace>(grads, {N}), f32(m), f32(v),
        master ? f32(master) : Out<ExecSpace>(), hp, options);
}

LLMK_DEFINE_QUERIES(AdamW, ::llmk::op::adamw::Op)

#define LLMK_INSTANTIATE_ADAMW(Space)                                                         \
  template std::size_t adamw_workspace_bytes<Space>(index_t, const AdamWOptions&,             \
                                                    std::string_view);                        \
  template void adamw<Space>(Context<Space>&, const Out<Space>&, const In<Space>&,            \
                             const Out<Space>&, const Out<Space>&, const Out<Space>&,         \
                             const AdamWHyperparams&, const AdamWOptions&);                   \
  template void adamw<Space>(Context<Space>&, BufferRef, ConstBufferRef, float*, float*,      \
                             float*, index_t, const AdamWHyperparams&, const AdamWOptions&);
LLMK_FOR_EACH_SPACE(LLMK_INSTANTIATE_ADAMW)

}  // namespace llmk
