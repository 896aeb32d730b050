// The entry points of the classifier forward: the declared call
// (core/op/entry.hpp over op.hpp: extents, storage, types, V, then the
// targets' check inside the call, before the first write), its queries, and
// their instantiations for every space.
#include <core/op/queries.hpp>
#include <core/spaces.hpp>
#include <ops/classifier_forward/op.hpp>

#include <array>

namespace llmk {

using op::classifier_forward::Op;

template <class ExecSpace>
std::size_t classifier_forward_workspace_bytes(index_t M, index_t V, index_t Vp,
                                               const ClassifierForwardOptions& options,
                                               std::string_view precision) {
  return core::op::workspace_bytes<Op, ExecSpace>(op::classifier_forward::Sizes{M, V, Vp},
                                                  options.impl, Math::fp32, precision);
}

template <class ExecSpace>
void classifier_forward(Context<ExecSpace>& ctx, const Out<ExecSpace>& losses,
                        const In<ExecSpace>& logits, const Targets<ExecSpace>& targets, index_t V,
                        const ClassifierForwardOptions& options) {
  core::op::call<Op>(ctx, options,
                     std::array<core::op::Operand, 3>{
                         losses, logits, op::classifier::targets_operand(targets)},
                     V);
}

template <class ExecSpace>
void classifier_forward(Context<ExecSpace>& ctx, float* losses, ConstBufferRef logits,
                        const std::int32_t* targets, index_t B, index_t T, index_t V, index_t Vp,
                        const ClassifierForwardOptions& options) {
  core::op::check_dimensions(Op::name, {{"B", B}, {"T", T}, {"V", V}, {"Vp", Vp}});
  // Every array's element count, checked before any reference is made of it.
  const index_t M = core::checked_product(B, T, Op::name, "M = B·T");
  core::checked_product(M, Vp, Op::name, "the elements of logits, M·Vp");
  classifier_forward(ctx, Out<ExecSpace>(BufferRef(losses), {M}), In<ExecSpace>(logits, {M, Vp}),
                     TargetsRef<ExecSpace>(targets, {M}), V, options);
}

LLMK_DEFINE_QUERIES(ClassifierForward, ::llmk::op::classifier_forward::Op)

#define LLMK_INSTANTIATE_CLASSIFIER_FORWARD(Space)                                            \
  template std::size_t classifier_forward_workspace_bytes<Space>(                              \
      index_t, index_t, index_t, const ClassifierForwardOptions&, std::string_view);           \
  template void classifier_forward<Space>(Context<Space>&, const Out<Space>&, const In<Space>&, \
                                          const Targets<Space>&, index_t,                      \
                                          const ClassifierForwardOptions&);                    \
  template void classifier_forward<Space>(Context<Space>&, float*, ConstBufferRef,             \
                                          const std::int32_t*, index_t, index_t, index_t,      \
                                          index_t, const ClassifierForwardOptions&);
LLMK_FOR_EACH_SPACE(LLMK_INSTANTIATE_CLASSIFIER_FORWARD)

}  // namespace llmk
