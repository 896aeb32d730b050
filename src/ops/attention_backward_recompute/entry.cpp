// The entry points of the recompute attention backward: validate the
// arguments, then hand over to the shared framework (core/op/): precision
// matching (precisions.hpp), the implementation (op.hpp's list), the call
// with its context and workspace, the queries. Explicit instantiations for
// every space.
#include <core/checked.hpp>
#include <core/op/queries.hpp>
#include <core/spaces.hpp>
#include <core/validate.hpp>
#include <ops/attention_backward/heads.hpp>
#include <ops/attention_backward_recompute/op.hpp>

#include <array>
#include <stdexcept>
#include <string>

namespace llmk {
namespace {

using namespace op::attention_backward_recompute;

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
  const index_t NHT = checked_product(NH, T, kOpName, "NH·T, lse's elements per sequence");
  checked_product(B, NHT, kOpName, "the elements of lse, B·NH·T");
  op::attention::check_heads_divide(kOpName, C, NH, c_from, nh_from);
}

// The arguments of a call after the shape checks: dqkv, qkv (B·T, 3C),
// dout, out (B·T, C), lse (B·NH·T); element types not yet matched.
template <class ExecSpace>
struct Operands {
  TensorRef<ExecSpace> dqkv;
  ConstTensorRef<ExecSpace> dout, qkv, out, lse;
  index_t B = 0, T = 0, C = 0, NH = 1;
  detail::Arguments args;  // as checked: the user workspace must overlap none
};

// lse fixes B, NH and T; qkv's last extent C (as 3C; dout's last extent
// where qkv's is not a multiple of 3, which is then qkv's fault). Activations
// of rank 3 are (B, T, ·), of rank 2 (B·T, ·); out has dout's extents.
template <class ExecSpace>
Operands<ExecSpace> validated(const Out<ExecSpace>& dqkv, const In<ExecSpace>& dout,
                              const In<ExecSpace>& qkv, const In<ExecSpace>& out,
                              const In<ExecSpace>& lse) {
  using detail::arg_info;
  using op::attention::refuse_rank;
  const auto a_dqkv = arg_info("dqkv", dqkv, true);
  const auto a_dout = arg_info("dout", dout, false);
  const auto a_qkv = arg_info("qkv", qkv, false);
  const auto a_out = arg_info("out", out, false);
  const auto a_lse = arg_info("lse", lse, false);
  if (lse.rank() != 3) refuse_rank(kOpName, a_lse, "rank 3 (B, NH, T)");
  const index_t B = lse.extent(0), NH = lse.extent(1), T = lse.extent(2);
  if (dout.rank() != 2 && dout.rank() != 3)
    refuse_rank(kOpName, a_dout, "rank 2 (B·T, C) or rank 3 (B, T, C)");
  const op::attention::Channels ch = op::attention::channels_of(dout, qkv);
  const index_t C = ch.C;
  check_sizes(B, T, C, NH, ch.from(), "lse's extent 1, the heads");
  const index_t M = B * T;
  op::attention::expect_activations(kOpName, "lse", dout.rank() == 3, B, T, ch, a_dqkv, a_dout,
                                    a_qkv, {&a_out});
  const auto args = {a_dqkv, a_dout, a_qkv, a_out, a_lse};
  detail::check_storage(kOpName, args);
  detail::check_memory_space<ExecSpace>(kOpName, args);
  Operands<ExecSpace> o;
  o.args = args;
  o.dqkv = core::op::flattened(dqkv, M, 3 * C);
  o.dout = core::op::flattened(dout, M, C);
  o.qkv = core::op::flattened(qkv, M, 3 * C);
  o.out = core::op::flattened(out, M, C);
  o.lse = core::op::flattened(lse, B * NH * T);
  o.B = B, o.T = T, o.C = C, o.NH = NH;
  return o;
}

// The call's element type in each role of a configuration (Precision::roles()).
template <class ExecSpace>
std::array<core::op::RoleType, 3> role_types(const Operands<ExecSpace>& o) {
  return {{{"inputs", o.dout.dtype()},
           {"lse", o.lse.dtype(), o.lse.size() != 0},
           {"dqkv", o.dqkv.dtype(), o.dqkv.size() != 0}}};
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
  a.out = static_cast<const In*>(o.out.data());
  a.lse = static_cast<const float*>(o.lse.data());
  a.B = o.B, a.T = o.T, a.C = o.C, a.NH = o.NH;
  a.alpha = kernels::attention_scale(o.C / o.NH);
  a.overwrite = options.dqkv_update == Update::overwrite;
  p.M = o.B;
  return p;
}

template <class ExecSpace>
void dispatch(Context<ExecSpace>& ctx, const Operands<ExecSpace>& o,
              const AttentionBackwardOptions& options) {
  core::op::check_same_type(kOpName, "dout", o.dout, {{"qkv", &o.qkv}, {"out", &o.out}},
                            "the inputs (dout, qkv, out)");
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

const std::vector<AttentionBackwardImplInfo>& attention_backward_recompute_impls() {
  static const std::vector<AttentionBackwardImplInfo> infos = core::op::impl_infos<Op>();
  return infos;
}

const std::vector<std::string>& attention_backward_recompute_precisions() {
  static const std::vector<std::string> names = core::op::precision_list<Op>();
  return names;
}

template <class ExecSpace>
bool attention_backward_recompute_available(std::string_view impl) {
  return core::op::available<Op, ExecSpace>(impl);
}

template <class ExecSpace>
std::string attention_backward_recompute_auto_impl(std::string_view precision, Math math) {
  return core::op::auto_impl<Op, ExecSpace>(precision, math);
}

template <class ExecSpace>
std::size_t attention_backward_recompute_workspace_bytes(index_t B, index_t T, index_t C,
                                                         index_t NH,
                                                         const AttentionBackwardOptions& options,
                                                         std::string_view precision) {
  core::op::check_dimensions(kOpName, {{"B", B}, {"T", T}, {"C", C}, {"NH", NH}});
  check_sizes(B, T, C, NH, "C", "NH");
  return core::op::workspace_bytes<Op, ExecSpace>(Sizes{B, T, C, NH}, options.impl, options.math,
                                                  precision);
}

// --- the entry points ---------------------------------------------------------

template <class ExecSpace>
void attention_backward_recompute(Context<ExecSpace>& ctx, const Out<ExecSpace>& dqkv,
                                  const In<ExecSpace>& dout, const In<ExecSpace>& qkv,
                                  const In<ExecSpace>& out, const In<ExecSpace>& lse,
                                  const AttentionBackwardOptions& options) {
  dispatch(ctx, validated<ExecSpace>(dqkv, dout, qkv, out, lse), options);
}

template <class ExecSpace>
void attention_backward_recompute(Context<ExecSpace>& ctx, BufferRef dqkv, ConstBufferRef dout,
                                  ConstBufferRef qkv, ConstBufferRef out, const float* lse,
                                  index_t B, index_t T, index_t C, index_t NH,
                                  const AttentionBackwardOptions& options) {
  core::op::check_dimensions(kOpName, {{"B", B}, {"T", T}, {"C", C}, {"NH", NH}});
  // Every array's element count, checked before any reference is made of it.
  check_sizes(B, T, C, NH, "C", "NH");
  const index_t M = B * T;
  attention_backward_recompute(ctx, Out<ExecSpace>(dqkv, {M, 3 * C}), In<ExecSpace>(dout, {M, C}),
                               In<ExecSpace>(qkv, {M, 3 * C}), In<ExecSpace>(out, {M, C}),
                               In<ExecSpace>(lse, {B, NH, T}), options);
}

template <class ExecSpace>
void attention_backward_recompute(const ExecSpace& exec, const Out<ExecSpace>& dqkv,
                                  const In<ExecSpace>& dout, const In<ExecSpace>& qkv,
                                  const In<ExecSpace>& out, const In<ExecSpace>& lse,
                                  const AttentionBackwardOptions& options) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  attention_backward_recompute(ctx, dqkv, dout, qkv, out, lse, options);
}

template <class ExecSpace>
void attention_backward_recompute(const ExecSpace& exec, BufferRef dqkv, ConstBufferRef dout,
                                  ConstBufferRef qkv, ConstBufferRef out, const float* lse,
                                  index_t B, index_t T, index_t C, index_t NH,
                                  const AttentionBackwardOptions& options) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  attention_backward_recompute(ctx, dqkv, dout, qkv, out, lse, B, T, C, NH, options);
}

#define LLMK_INSTANTIATE_ATTENTION_BACKWARD_RECOMPUTE(Space)                                    \
  template bool attention_backward_recompute_available<Space>(std::string_view);               \
  template std::string attention_backward_recompute_auto_impl<Space>(std::string_view, Math);  \
  template std::size_t attention_backward_recompute_workspace_bytes<Space>(                    \
      index_t, index_t, index_t, index_t, const AttentionBackwardOptions&, std::string_view);  \
  template void attention_backward_recompute<Space>(                                           \
      Context<Space>&, const Out<Space>&, const In<Space>&, const In<Space>&, const In<Space>&, \
      const In<Space>&, const AttentionBackwardOptions&);                                      \
  template void attention_backward_recompute<Space>(                                           \
      Context<Space>&, BufferRef, ConstBufferRef, ConstBufferRef, ConstBufferRef, const float*, \
      index_t, index_t, index_t, index_t, const AttentionBackwardOptions&);                    \
  template void attention_backward_recompute<Space>(                                           \
      const Space&, const Out<Space>&, const In<Space>&, const In<Space>&, const In<Space>&,    \
      const In<Space>&, const AttentionBackwardOptions&);                                      \
  template void attention_backward_recompute<Space>(                                           \
      const Space&, BufferRef, ConstBufferRef, ConstBufferRef, ConstBufferRef, const float*,    \
      index_t, index_t, index_t, index_t, const AttentionBackwardOptions&);
LLMK_FOR_EACH_SPACE(LLMK_INSTANTIATE_ATTENTION_BACKWARD_RECOMPUTE)

}  // namespace llmk
