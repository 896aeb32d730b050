// The entry points of the classifier backward: the declared call
// (core/op/entry.hpp over op.hpp: extents, storage, types, V, then the
// targets' check inside the call, before the first write), its queries, and
// their instantiations for every space.
#include <core/op/queries.hpp>
#include <core/spaces.hpp>
#include <core/validate.hpp>
#include <ops/classifier_backward/op.hpp>

#include <array>
#include <string>

namespace llmk {
namespace {

using namespace op::classifier_backward;

// dloss as an array operand: a view, or a pointer to one float per position
// in the logits' rows ((B, T) or (M), as the targets); none for one value.
template <class ExecSpace>
core::op::Operand dloss_operand(const DlossRef<ExecSpace>& d, const In<ExecSpace>& logits) {
  if (!d.pointer) return d.per_position;
  const index_t B = logits.extent(0);
  return logits.rank() == 3 ? ConstTensorRef<ExecSpace>({d.pointer, DType::f32}, {B, logits.extent(1)})
                            : ConstTensorRef<ExecSpace>({d.pointer, DType::f32}, {B});
}

}  // namespace

template <class ExecSpace>
std::size_t classifier_backward_workspace_bytes(index_t M, index_t V, index_t Vp,
                                                const ClassifierBackwardOptions& options,
                                                std::string_view precision) {
  return core::op::workspace_bytes<Op, ExecSpace>(Sizes{M, V, Vp}, options.impl, Math::fp32,
                                                  precision);
}

// --- the entry points ---------------------------------------------------------

template <class ExecSpace>
void classifier_backward(Context<ExecSpace>& ctx, const Out<ExecSpace>& dlogits,
                         const Out<ExecSpace>& losses, const In<ExecSpace>& logits,
                         const Targets<ExecSpace>& targets, const Dloss<ExecSpace>& dloss,
                         index_t V, const ClassifierBackwardOptions& options) {
  core::op::call<Op>(ctx, options,
                     std::array<core::op::Operand, 5>{dlogits, losses, logits,
                                                      op::classifier::targets_operand(targets),
                                                      dloss_operand(dloss, logits)},
                     Scalars{dloss.value, V});
}

template <class ExecSpace>
void classifier_backward(Context<ExecSpace>& ctx, BufferRef dlogits, float* losses,
                         ConstBufferRef logits, const std::int32_t* targets,
                         const Dloss<ExecSpace>& dloss, index_t B, index_t T, index_t V,
                         index_t Vp, const ClassifierBackwardOptions& options) {
  core::op::check_dimensions(kOpName, {{"B", B}, {"T", T}, {"V", V}, {"Vp", Vp}});
  // Every array's element count, checked before any reference is made of it.
  const index_t M = core::checked_product(B, T, kOpName, "M = B·T");
  core::checked_product(M, Vp, kOpName, "the elements of logits and dlogits, M·Vp");
  classifier_backward(ctx, Out<ExecSpace>(dlogits, {M, Vp}),
                      losses ? Out<ExecSpace>(losses, {M}) : Out<ExecSpace>(),
                      In<ExecSpace>(logits, {M, Vp}), TargetsRef<ExecSpace>(targets, {M}), dloss,
                      V, options);
}

LLMK_DEFINE_QUERIES(ClassifierBackward, ::llmk::op::classifier_backward::Op)

#define LLMK_INSTANTIATE_CLASSIFIER_BACKWARD(Space)                                            \
  template std::size_t classifier_backward_workspace_bytes<Space>(                                \
      index_t, index_t, index_t, const ClassifierBackwardOptions&, std::string_view);             \
  template void classifier_backward<Space>(Context<Space>&, const Out<Space>&, const Out<Space>&, \
                                           const In<Space>&, const Targets<Space>&,               \
                                           const Dloss<Space>&, index_t,                          \
                                           const ClassifierBackwardOptions&);                     \
  template void classifier_backward<Space>(Context<Space>&, BufferRef, float*, ConstBufferRef,    \
                                           const std::int32_t*, const Dloss<Space>&, index_t,     \
                                           index_t, index_t, index_t,                             \
                                           const ClassifierBackwardOptions&);
LLMK_FOR_EACH_SPACE(LLMK_INSTANTIATE_CLASSIFIER_BACKWARD)

}  // namespace llmk
