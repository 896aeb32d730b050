// The entry points of the encoder backward: validate the arguments, then hand
// over to the shared framework (core/op/). Explicit instantiations for every
// space.
#include <core/op/queries.hpp>
#include <core/spaces.hpp>
#include <core/validate.hpp>
#include <ops/encoder_backward/op.hpp>

#include <array>
#include <stdexcept>
#include <string>

namespace llmk {
namespace {

using namespace op::encoder_backward;

template <class ExecSpace>
struct Operands {
  TensorRef<ExecSpace> dwte, dwpe;
  ConstTensorRef<ExecSpace> dout;  // (M, C)
  TokensView<ExecSpace> tokens;    // (B, T)
  index_t B = 0, T = 0, C = 0, V = 0;
  detail::Arguments args;  // as checked: the user workspace must overlap none
};

template <class ExecSpace>
Operands<ExecSpace> validated(const Out<ExecSpace>& dwte, const Out<ExecSpace>& dwpe,
                              const In<ExecSpace>& dout, const TokensView<ExecSpace>& tokens) {
  using detail::arg_info;
  using detail::expect_extents;
  const auto a_dwte = arg_info("dwte", dwte, true);
  const auto a_dwpe = arg_info("dwpe", dwpe, true);
  const auto a_dout = arg_info("dout", dout, false);
  const auto a_tokens = arg_info("tokens", tokens, false);
  if (dout.rank() != 3) {
    throw std::invalid_argument(std::string(kOpName) + ": argument 'dout' has extents " +
                                detail::extents_string(a_dout) +
                                " but rank 3 (B, T, C) was expected");
  }
  const index_t B = dout.extent(0), T = dout.extent(1), C = dout.extent(2);
  if (dwte.rank() != 2) {
    throw std::invalid_argument(std::string(kOpName) + ": argument 'dwte' has extents " +
                                detail::extents_string(a_dwte) +
                                " but rank 2 (V, C) was expected");
  }
  const index_t V = dwte.extent(0);
  expect_extents(kOpName, a_dwte, {V, C}, "(V, C), C from dout's last extent");
  expect_extents(kOpName, a_dwpe, {T, C}, "(T, C) from dout's extents");
  expect_extents(kOpName, a_tokens, {B, T}, "(B, T) from dout's extents");
  const auto args = {a_dwte, a_dwpe, a_dout, a_tokens};
  detail::check_storage(kOpName, args);
  detail::check_memory_space<ExecSpace>(kOpName, args);
  Operands<ExecSpace> o;
  o.args = args;
  o.dwte = dwte, o.dwpe = dwpe, o.tokens = tokens;
  o.dout = core::op::flattened(dout, B * T, C);
  o.B = B, o.T = T, o.C = C, o.V = V;
  return o;
}

template <class ExecSpace>
std::array<core::op::RoleType, 3> role_types(const Operands<ExecSpace>& o) {
  return {{{"dout", o.dout.dtype()},
           {"dwte", o.dwte.dtype(), o.dwte.size() != 0},
           {"dwpe", o.dwpe.dtype(), o.dwpe.size() != 0}}};
}

template <class ExecSpace, class P>
Problem<ExecSpace, P> typed_problem(const Operands<ExecSpace>& o,
                                    const EncoderBackwardOptions& options) {
  using core::op::typed_matrix;
  Problem<ExecSpace, P> p;
  auto& a = p.args;
  const index_t M = o.B * o.T;
  a.dwte = typed_matrix<typename P::dwte>(o.dwte, o.V, o.C);
  a.dwpe = typed_matrix<typename P::dwpe>(o.dwpe, o.T, o.C);
  a.dout = typed_matrix<typename P::in>(o.dout, M, o.C);
  a.tokens = decltype(a.tokens)(o.tokens.data(), M);
  a.B = o.B, a.T = o.T;
  a.overwrite_dwte = options.dwte_update == Update::overwrite;
  a.overwrite_dwpe = options.dwpe_update == Update::overwrite;
  a.check_tokens = options.check_tokens;
  p.M = M, p.C = o.C;
  return p;
}

template <class ExecSpace>
void dispatch(Context<ExecSpace>& ctx, const Operands<ExecSpace>& o,
              const EncoderBackwardOptions& options) {
  core::op::with_matching_precision<Precisions>(kOpName, role_types(o), [&](auto ptag) {
    using P = typename decltype(ptag)::type;
    const Problem<ExecSpace, P> p = typed_problem<ExecSpace, P>(o, options);
    core::op::with_impl<Op, ExecSpace, P>(options.impl, Math::fp32, p.sizes(), [&](auto tag) {
      using I = typename decltype(tag)::type;
      core::op::run_impl<Op, I, ExecSpace, P>(ctx.state(), p, o.args, options);
    });
  });
}

}  // namespace

// --- what the list says -------------------------------------------------------

const std::vector<EncoderBackwardImplInfo>& encoder_backward_impls() {
  static const std::vector<EncoderBackwardImplInfo> infos = core::op::impl_infos<Op>();
  return infos;
}

const std::vector<std::string>& encoder_backward_precisions() {
  static const std::vector<std::string> names = core::op::precision_list<Op>();
  return names;
}

template <class ExecSpace>
bool encoder_backward_available(std::string_view impl) {
  return core::op::available<Op, ExecSpace>(impl);
}

template <class ExecSpace>
std::string encoder_backward_auto_impl(std::string_view precision) {
  return core::op::auto_impl<Op, ExecSpace>(precision, Math::fp32);
}

template <class ExecSpace>
std::size_t encoder_backward_workspace_bytes(index_t B, index_t T, index_t C, index_t V,
                                             const EncoderBackwardOptions& options,
                                             std::string_view precision) {
  return core::op::workspace_bytes<Op, ExecSpace>(Sizes{B * T, C, T, V}, options.impl,
                                                  Math::fp32, precision);
}

// --- the entry points ---------------------------------------------------------

template <class ExecSpace>
void encoder_backward(Context<ExecSpace>& ctx, const Out<ExecSpace>& dwte,
                      const Out<ExecSpace>& dwpe, const In<ExecSpace>& dout,
                      const TokensView<typename detail::NoDeduce<ExecSpace>::type>& tokens,
                      const EncoderBackwardOptions& options) {
  dispatch(ctx, validated<ExecSpace>(dwte, dwpe, dout, tokens), options);
}

template <class ExecSpace>
void encoder_backward(Context<ExecSpace>& ctx, BufferRef dwte, BufferRef dwpe,
                      ConstBufferRef dout, const int* tokens, index_t B, index_t T, index_t C,
                      index_t V, const EncoderBackwardOptions& options) {
  core::op::check_dimensions(kOpName, {{"B", B}, {"T", T}, {"C", C}, {"V", V}});
  const index_t M = core::checked_product(B, T, kOpName, "M = B·T");
  core::checked_product(M, C, kOpName, "the elements of dout, M·C");
  core::checked_product(V, C, kOpName, "the elements of dwte, V·C");
  core::checked_product(T, C, kOpName, "the elements of dwpe, T·C");
  encoder_backward(ctx, Out<ExecSpace>(dwte, {V, C}), Out<ExecSpace>(dwpe, {T, C}),
                   In<ExecSpace>(dout, {B, T, C}), TokensView<ExecSpace>(tokens, B, T), options);
}

template <class ExecSpace>
void encoder_backward(const ExecSpace& exec, const Out<ExecSpace>& dwte,
                      const Out<ExecSpace>& dwpe, const In<ExecSpace>& dout,
                      const TokensView<typename detail::NoDeduce<ExecSpace>::type>& tokens,
                      const EncoderBackwardOptions& options) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  encoder_backward(ctx, dwte, dwpe, dout, tokens, options);
}

template <class ExecSpace>
void encoder_backward(const ExecSpace& exec, BufferRef dwte, BufferRef dwpe, ConstBufferRef dout,
                      const int* tokens, index_t B, index_t T, index_t C, index_t V,
                      const EncoderBackwardOptions& options) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  encoder_backward(ctx, dwte, dwpe, dout, tokens, B, T, C, V, options);
}

#define LLMK_INSTANTIATE_ENCODER_BACKWARD(Space)                                              \
  template bool encoder_backward_available<Space>(std::string_view);                         \
  template std::string encoder_backward_auto_impl<Space>(std::string_view);                  \
  template std::size_t encoder_backward_workspace_bytes<Space>(                              \
      index_t, index_t, index_t, index_t, const EncoderBackwardOptions&, std::string_view);   \
  template void encoder_backward<Space>(Context<Space>&, const Out<Space>&, const Out<Space>&, \
                                        const In<Space>&, const TokensView<Space>&,           \
                                        const EncoderBackwardOptions&);                       \
  template void encoder_backward<Space>(Context<Space>&, BufferRef, BufferRef, ConstBufferRef, \
                                        const int*, index_t, index_t, index_t, index_t,       \
                                        const EncoderBackwardOptions&);                       \
  template void encoder_backward<Space>(const Space&, const Out<Space>&, const Out<Space>&,    \
                                        const In<Space>&, const TokensView<Space>&,           \
                                        const EncoderBackwardOptions&);                       \
  template void encoder_backward<Space>(const Space&, BufferRef, BufferRef, ConstBufferRef,    \
                                        const int*, index_t, index_t, index_t, index_t,       \
                                        const EncoderBackwardOptions&);
LLMK_FOR_EACH_SPACE(LLMK_INSTANTIATE_ENCODER_BACKWARD)

}  // namespace llmk
