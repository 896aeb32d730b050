// The entry points of the recompute attention backward: the declared call
// (core/op/entry.hpp over op.hpp), its queries, and their instantiations for
// every space.
#include <core/op/queries.hpp>
#include <core/spaces.hpp>
#include <ops/attention_backward_recompute/op.hpp>

namespace llmk {

using op::attention_backward_recompute::Op;

template <class ExecSpace>
std::size_t attention_backward_recompute_workspace_bytes(index_t B, index_t T, index_t C,
                                                         index_t NH,
                                                         const AttentionBackwardOptions& options,
                                                         std::string_view precision) {
  core::op::check_dimensions(Op::name, {{"B", B}, {"T", T}, {"C", C}, {"NH", NH}});
  op::attention_backward_recompute::check_sizes(B, T, C, NH, "C", "NH");
  return core::op::workspace_bytes<Op, ExecSpace>(
      op::attention_backward_recompute::Sizes{B, T, C, NH}, options.impl, options.math, precision);
}

template <class ExecSpace>
void attention_backward_recompute(Context<ExecSpace>& ctx, const Out<ExecSpace>& dqkv,
                                  const In<ExecSpace>& dout, const In<ExecSpace>& qkv,
                                  const In<ExecSpace>& out, const In<ExecSpace>& lse,
                                  const AttentionBackwardOptions& options) {
  core::op::call<Op>(ctx, options, std::array<core::op::Operand, 5>{dqkv, dout, qkv, out, lse});
}

// Every array's element count checked before any reference is made of it.
template <class ExecSpace>
void attention_backward_recompute(Context<ExecSpace>& ctx, BufferRef dqkv, ConstBufferRef dout,
                                  ConstBufferRef qkv, ConstBufferRef out, const float* lse,
                                  index_t B, index_t T, index_t C, index_t NH,
                                  const AttentionBackwardOptions& options) {
  core::op::check_dimensions(Op::name, {{"B", B}, {"T", T}, {"C", C}, {"NH", NH}});
  op::attention_backward_recompute::check_sizes(B, T, C, NH, "C", "NH");
  const index_t M = B * T;
  attention_backward_recompute(ctx, Out<ExecSpace>(dqkv, {M, 3 * C}), In<ExecSpace>(dout, {M, C}),
                               In<ExecSpace>(qkv, {M, 3 * C}), In<ExecSpace>(out, {M, C}),
                               In<ExecSpace>(lse, {B, NH, T}), options);
}

LLMK_DEFINE_QUERIES(AttentionBackwardRecompute, ::llmk::op::attention_backward_recompute::Op)

#define LLMK_INSTANTIATE_ATTENTION_BACKWARD_RECOMPUTE(Space)                                    \
  template std::size_t attention_backward_recompute_workspace_bytes<Space>(                     \
      index_t, index_t, index_t, index_t, const AttentionBackwardOptions&, std::string_view);   \
  template void attention_backward_recompute<Space>(                                            \
      Context<Space>&, const Out<Space>&, const In<Space>&, const In<Space>&, const In<Space>&, \
      const In<Space>&, const AttentionBackwardOptions&);                                       \
  template void attention_backward_recompute<Space>(                                            \
      Context<Space>&, BufferRef, ConstBufferRef, ConstBufferRef, ConstBufferRef, const float*, \
      index_t, index_t, index_t, index_t, const AttentionBackwardOptions&);
LLMK_FOR_EACH_SPACE(LLMK_INSTANTIATE_ATTENTION_BACKWARD_RECOMPUTE)

}  // namespace llmk
