// The entry points of the attention backward: validate the arguments, then
// hand over to the shared framework (core/op/): precision matching
// (precisions.hpp), the implementation (op.hpp's list), the call with its
// context and workspace, the queries. Explicit instantiations for every space.
#include <core/checked.hpp>
#include <core/op/queries.hpp>
#include <core/spaces.hpp>
#include <core/validate.hpp>
#include <ops/attention_backward/heads.hpp>
#include <ops/attention_backward/op.hpp>

#include <array>
#include <stdexcept>
#include <string>

namespace llmk {
namespace {

using namespace op::attention_backward;

// B, T, C, NH of a call, checked: NH ≥ 1 and a divisor of C, and every
// array's element count (and each per-sequence count, which B = 0 would
// hide) within core::kMaxElements. `c_from` and `nh_from` say where C and NH
// came from, for the messages.
void check_sizes(index_t B, index_t T, index_t C, index_t NH, const char* c_from,
                 const char* nh_from) {
  using core::checked_product;
  op::attention::check_some_heads(kOpName, NH, nh_from);
  const index_t M = checked_product(B, T, kOpName, "M = B·T");
  const index_t C3 = checked_product(3, C, kOpName, "3C");
  checked_product(M, C3, kOpName, "the elements of qkv and dqkv, B·T·3C");
  checked_product(T, C3, kOpName, "T·3C, qkv's elements per sequence");
  const index_t NHT = checked_product(NH, T, kOpName, "NH·T");
  checked_product(NHT, T, kOpName, "NH·T·T, att's elements per sequence");
  checked_product(checked_product(B, NHT, kOpName, "B·NH·T"), T, kOpName,
                  "the elements of att, B·NH·T·T");
  op::attention::check_heads_divide(kOpName, C, NH, c_from, nh_from);
}

// The arguments of a call after the shape checks: dqkv, qkv (B·T, 3C),
// dout (B·T, C), att (B, NH, T, T); element types not yet matched.
template <class ExecSpace>
struct Operands {
  TensorRef<ExecSpace> dqkv;
  ConstTensorRef<ExecSpace> dout, qkv, att;
  index_t B = 0, T = 0, C = 0, NH = 1;
  detail::Arguments args;  // as checked: the user workspace must overlap none
};

// att fixes B, NH and T; qkv's last extent C (as 3C; dout's last extent
// where qkv's is not a multiple of 3, which is then qkv's fault). Activations
// of rank 3 are (B, T, ·), of rank 2 (B·T, ·).
template <class ExecSpace>
Operands<ExecSpace> validated(const Out<ExecSpace>& dqkv, const In<ExecSpace>& dout,
                              const In<ExecSpace>& qkv, const In<ExecSpace>& att) {
  using detail::arg_info;
  using op::attention::refuse_rank;
  const auto a_dqkv = arg_info("dqkv", dqkv, true);
  const auto a_dout = arg_info("dout", dout, false);
  const auto a_qkv = arg_info("qkv", qkv, false);
  const auto a_att = arg_info("att", att, false);
  if (att.rank() != 4) refuse_rank(kOpName, a_att, "rank 4 (B, NH, T, T)");
  const index_t B = att.extent(0), NH = att.extent(1), T = att.extent(2);
  detail::expect_extents(kOpName, a_att, {B, NH, T, T},
                         "(B, NH, T, T), a T × T matrix per (b, h)");
  if (dout.rank() != 2 && dout.rank() != 3)
    refuse_rank(kOpName, a_dout, "rank 2 (B·T, C) or rank 3 (B, T, C)");
  const op::attention::Channels ch = op::attention::channels_of(dout, qkv);
  const index_t C = ch.C;
  check_sizes(B, T, C, NH, ch.from(), "att's extent 1, the heads");
  const index_t M = B * T;
  op::attention::expect_activations(kOpName, "att", dout.rank() == 3, B, T, ch, a_dqkv, a_dout,
                                    a_qkv);
  const auto args = {a_dqkv, a_dout, a_qkv, a_att};
  detail::check_storage(kOpName, args);
  detail::check_memory_space<ExecSpace>(kOpName, args);
  Operands<ExecSpace> o;
  o.args = args;
  o.dqkv = core::op::flattened(dqkv, M, 3 * C);
  o.dout = core::op::flattened(dout, M, C);
  o.qkv = core::op::flattened(qkv, M, 3 * C);
  o.att = att;
  o.B = B, o.T = T, o.C = C, o.NH = NH;
  return o;
}

// The call's element type in each role of a configuration (Precision::roles()).
template <class ExecSpace>
std::array<core::op::RoleType, 2> role_types(const Operands<ExecSpace>& o) {
  return {{{"inputs", o.dout.dtype()}, {"dqkv", o.dqkv.dtype(), o.dqkv.size() != 0}}};
}

template <class ExecSpace, class P>
Problem<ExecSpace, P> typed_problem(const Operands<ExecSpace>& o,
                                    const AttentionBackwardOptions& options) {
  using In = typename P::in;
  Problem<ExecSpace, P> p;
  auto& a = p.args;
  a.dqkv = static_cast<typename P::dqkv*>(o.dqkv.data());
  a.dout = static_cast<const In*>(o.dout.data());
  a.qkv = static_cast<const In*>(o.qkv.data());
  a.att = static_cast<const In*>(o.att.data());
  a.B = o.B, a.T = o.T, a.C = o.C, a.NH = o.NH;
  a.alpha = kernels::attention_scale(o.C / o.NH);
  a.overwrite = options.dqkv_update == Update::overwrite;
  p.M = o.B;
  return p;
}

template <class ExecSpace>
void dispatch(Context<ExecSpace>& ctx, const Operands<ExecSpace>& o,
              const AttentionBackwardOptions& options) {
  core::op::check_same_type(kOpName, "dout", o.dout, {{"qkv", &o.qkv}, {"att", &o.att}},
                            "the inputs (dout, qkv, att)");
  core::op::with_matching_precision<Precisions>(kOpName, role_types(o), [&](auto ptag) {
    using P = typename decltype(ptag)::type;
    const Problem<ExecSpace, P> p = typed_problem<ExecSpace, P>(o, options);
    core::op::with_impl<Op, ExecSpace, P>(options.impl, options.math, p.sizes(), [&](auto tag) {
      using I = typename decltype(tag)::type;
      core::op::run_impl<Op, I, ExecSpace, P>(ctx.state(), p, o.args, options);
    });
  });
}

}  // namespace

// --- what the list says -------------------------------------------------------

const std::vector<AttentionBackwardImplInfo>& attention_backward_impls() {
  static const std::vector<AttentionBackwardImplInfo> infos = core::op::impl_infos<Op>();
  return infos;
}

const std::vector<std::string>& attention_backward_precisions() {
  static const std::vector<std::string> names = core::op::precision_list<Op>();
  return names;
}

template <class ExecSpace>
bool attention_backward_available(std::string_view impl) {
  return core::op::available<Op, ExecSpace>(impl);
}

template <class ExecSpace>
std::string attention_backward_auto_impl(std::string_view precision, Math math) {
  return core::op::auto_impl<Op, ExecSpace>(precision, math);
}

template <class ExecSpace>
std::size_t attention_backward_workspace_bytes(index_t B, index_t T, index_t C, index_t NH,
                                               const AttentionBackwardOptions& options,
                                               std::string_view precision) {
  core::op::check_dimensions(kOpName, {{"B", B}, {"T", T}, {"C", C}, {"NH", NH}});
  check_sizes(B, T, C, NH, "C", "NH");
  return core::op::workspace_bytes<Op, ExecSpace>(Sizes{B, T, C, NH}, options.impl, options.math,
                                                  precision);
}

// --- the entry points ---------------------------------------------------------

template <class ExecSpace>
void attention_backward(Context<ExecSpace>& ctx, const Out<ExecSpace>& dqkv,
                        const In<ExecSpace>& dout, const In<ExecSpace>& qkv,
                        const In<ExecSpace>& att, const AttentionBackwardOptions& options) {
  dispatch(ctx, validated<ExecSpace>(dqkv, dout, qkv, att), options);
}

template <class ExecSpace>
void attention_backward(Context<ExecSpace>& ctx, BufferRef dqkv, ConstBufferRef dout,
                        ConstBufferRef qkv, ConstBufferRef att, index_t B, index_t T, index_t C,
                        index_t NH, const AttentionBackwardOptions& options) {
  core::op::check_dimensions(kOpName, {{"B", B}, {"T", T}, {"C", C}, {"NH", NH}});
  // Every array's element count, checked before any reference is made of it.
  check_sizes(B, T, C, NH, "C", "NH");
  const index_t M = B * T;
  attention_backward(ctx, Out<ExecSpace>(dqkv, {M, 3 * C}), In<ExecSpace>(dout, {M, C}),
                     In<ExecSpace>(qkv, {M, 3 * C}), In<ExecSpace>(att, {B, NH, T, T}), options);
}

template <class ExecSpace>
void attention_backward(const ExecSpace& exec, const Out<ExecSpace>& dqkv,
                        const In<ExecSpace>& dout, const In<ExecSpace>& qkv,
                        const In<ExecSpace>& att, const AttentionBackwardOptions& options) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  attention_backward(ctx, dqkv, dout, qkv, att, options);
}

template <class ExecSpace>
void attention_backward(const ExecSpace& exec, BufferRef dqkv, ConstBufferRef dout,
                        ConstBufferRef qkv, ConstBufferRef att, index_t B, index_t T, index_t C,
                        index_t NH, const AttentionBackwardOptions& options) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  attention_backward(ctx, dqkv, dout, qkv, att, B, T, C, NH, options);
}

#define LLMK_INSTANTIATE_ATTENTION_BACKWARD(Space)                                              \
  template bool attention_backward_available<Space>(std::string_view);                         \
  template std::string attention_backward_auto_impl<Space>(std::string_view, Math);            \
  template std::size_t attention_backward_workspace_bytes<Space>(                              \
      index_t, index_t, index_t, index_t, const AttentionBackwardOptions&, std::string_view);  \
  template void attention_backward<Space>(Context<Space>&, const Out<Space>&, const In<Space>&, \
                                          const In<Space>&, const In<Space>&,                  \
                                          const AttentionBackwardOptions&);                    \
  template void attention_backward<Space>(Context<Space>&, BufferRef, ConstBufferRef,           \
                                          ConstBufferRef, ConstBufferRef, index_t, index_t,     \
                                          index_t, index_t, const AttentionBackwardOptions&);  \
  template void attention_backward<Space>(const Space&, const Out<Space>&, const In<Space>&,    \
                                          const In<Space>&, const In<Space>&,                  \
                                          const AttentionBackwardOptions&);                    \
  template void attention_backward<Space>(const Space&, BufferRef, ConstBufferRef,              \
                                          ConstBufferRef, ConstBufferRef, index_t, index_t,     \
                                          index_t, index_t, const AttentionBackwardOptions&);
LLMK_FOR_EACH_SPACE(LLMK_INSTANTIATE_ATTENTION_BACKWARD)

}  // namespace llmk
