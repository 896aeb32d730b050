// The entry points of the attention backward: the declared call
// (core/op/entry.hpp over op.hpp), its queries, and their instantiations for
// every space.
#include <core/op/queries.hpp>
#include <core/spaces.hpp>
#include <ops/attention_backward/op.hpp>

namespace llmk {

using op::attention_backward::Op;

template <class ExecSpace>
std::size_t attention_backward_workspace_bytes(index_t B, index_t T, index_t C, index_t NH,
                                               const AttentionBackwardOptions& options,
                                               std::string_view precision) {
  core::op::check_dimensions(Op::name, {{"B", B}, {"T", T}, {"C", C}, {"NH", NH}});
  op::attention_backward::check_sizes(B, T, C, NH, "C", "NH");
  return core::op::workspace_bytes<Op, ExecSpace>(op::attention_backward::Sizes{B, T, C, NH},
                                                  options.impl, options.math, precision);
}

template <class ExecSpace>
void attention_backward(Context<ExecSpace>& ctx, const Out<ExecSpace>& dqkv,
                        const In<ExecSpace>& dout, const In<ExecSpace>& qkv,
                        const In<ExecSpace>& att, const AttentionBackwardOptions& options) {
  core::op::call<Op>(ctx, options, std::array<core::op::Operand, 4>{dqkv, dout, qkv, att});
}

// Every array's element count checked before any reference is made of it.
template <class ExecSpace>
void attention_backward(Context<ExecSpace>& ctx, BufferRef dqkv, ConstBufferRef dout,
                        ConstBufferRef qkv, ConstBufferRef att, index_t B, index_t T, index_t C,
                        index_t NH, const AttentionBackwardOptions& options) {
  core::op::check_dimensions(Op::name, {{"B", B}, {"T", T}, {"C", C}, {"NH", NH}});
  op::attention_backward::check_sizes(B, T, C, NH, "C", "NH");
  const index_t M = B * T;
  attention_backward(ctx, Out<ExecSpace>(dqkv, {M, 3 * C}), In<ExecSpace>(dout, {M, C}),
                     In<ExecSpace>(qkv, {M, 3 * C}), In<ExecSpace>(att, {B, NH, T, T}), options);
}

LLMK_DEFINE_QUERIES(AttentionBackward, ::llmk::op::attention_backward::Op)

#define LLMK_INSTANTIATE_ATTENTION_BACKWARD(Space)                                              \
  template std::size_t attention_backward_workspace_bytes<Space>(                               \
      index_t, index_t, index_t, index_t, const AttentionBackwardOptions&, std::string_view);   \
  template void attention_backward<Space>(Context<Space>&, const Out<Space>&, const In<Space>&, \
                                          const In<Space>&, const In<Space>&,                   \
                                          const AttentionBackwardOptions&);                     \
  template void attention_backward<Space>(Context<Space>&, BufferRef, ConstBufferRef,           \
                                          ConstBufferRef, ConstBufferRef, index_t, index_t,     \
                                          index_t, index_t, const AttentionBackwardOptions&);
LLMK_FOR_EACH_SPACE(LLMK_INSTANTIATE_ATTENTION_BACKWARD)

}  // namespace llmk
