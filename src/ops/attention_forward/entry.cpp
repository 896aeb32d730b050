// The entry points of the attention forward: the declared call
// (core/op/entry.hpp over op.hpp), its queries, and their instantiations for
// every space.
#include <core/op/queries.hpp>
#include <core/spaces.hpp>
#include <ops/attention_forward/op.hpp>

namespace llmk {

using op::attention_forward::Op;

template <class ExecSpace>
std::size_t attention_forward_workspace_bytes(index_t B, index_t T, index_t C, index_t NH,
                                              const AttentionForwardOptions& options,
                                              std::string_view precision) {
  core::op::check_dimensions(Op::name, {{"B", B}, {"T", T}, {"C", C}, {"NH", NH}});
  op::attention_forward::check_sizes(B, T, C, NH, "C", "NH");
  return core::op::workspace_bytes<Op, ExecSpace>(op::attention_forward::Sizes{B, T, C, NH},
                                                  options.impl, Math::fp32, precision);
}

template <class ExecSpace>
void attention_forward(Context<ExecSpace>& ctx, const Out<ExecSpace>& out,
                       const Out<ExecSpace>& lse, const In<ExecSpace>& qkv,
                       const AttentionForwardOptions& options) {
  core::op::call<Op>(ctx, options, std::array<core::op::Operand, 3>{out, lse, qkv});
}

// Every array's element count checked before any reference is made of it.
template <class ExecSpace>
void attention_forward(Context<ExecSpace>& ctx, BufferRef out, float* lse, ConstBufferRef qkv,
                       index_t B, index_t T, index_t C, index_t NH,
                       const AttentionForwardOptions& options) {
  core::op::check_dimensions(Op::name, {{"B", B}, {"T", T}, {"C", C}, {"NH", NH}});
  op::attention_forward::check_sizes(B, T, C, NH, "C", "NH");
  const index_t M = B * T;
  attention_forward(ctx, Out<ExecSpace>(out, {M, C}), Out<ExecSpace>(BufferRef(lse), {B, NH, T}),
                    In<ExecSpace>(qkv, {M, 3 * C}), options);
}

LLMK_DEFINE_QUERIES(AttentionForward, ::llmk::op::attention_forward::Op)

#define LLMK_INSTANTIATE_ATTENTION_FORWARD(Space)                                                 \
  template std::size_t attention_forward_workspace_bytes<Space>(                                  \
      index_t, index_t, index_t, index_t, const AttentionForwardOptions&, std::string_view);      \
  template void attention_forward<Space>(Context<Space>&, const Out<Space>&, const Out<Space>&,   \
                                         const In<Space>&, const AttentionForwardOptions&);       \
  template void attention_forward<Space>(Context<Space>&, BufferRef, float*, ConstBufferRef,      \
                                         index_t, index_t, index_t, index_t,                      \
                                         const AttentionForwardOptions&);
LLMK_FOR_EACH_SPACE(LLMK_INSTANTIATE_ATTENTION_FORWARD)

}  // namespace llmk
