// The entry points of the GELU backward: validate and flatten the arguments,
// then hand over to the shared framework (core/op/): precision matching
// (precisions.hpp), the implementation (op.hpp's list), the call with its
// context, and the queries. Explicit instantiations for every space.
#include <core/op/queries.hpp>
#include <core/spaces.hpp>
#include <core/validate.hpp>
#include <ops/gelu_backward/op.hpp>

#include <array>
#include <stdexcept>
#include <string>

namespace llmk {
namespace {

using namespace op::gelu_backward;

// The arguments of a call after the shape checks: M rows of C elements
// (raw pointers: N rows of one), element types not yet matched.
template <class ExecSpace>
struct Operands {
  TensorRef<ExecSpace> dinp;
  ConstTensorRef<ExecSpace> dout, inp;
  index_t M = 0, C = 0;
  detail::Arguments args;  // as checked: the user workspace must overlap none
};

template <class ExecSpace>
Operands<ExecSpace> validated(const Out<ExecSpace>& dinp, const In<ExecSpace>& dout,
                              const In<ExecSpace>& inp) {
  using detail::arg_info;
  using detail::expect_extents;
  const auto a_dinp = arg_info("dinp", dinp, true);
  const auto a_dout = arg_info("dout", dout, false);
  const auto a_inp = arg_info("inp", inp, false);
  const int rank = dout.rank();
  if (rank != 2 && rank != 3) {
    throw std::invalid_argument(std::string(kOpName) + ": argument 'dout' has extents " +
                                detail::extents_string(a_dout) +
                                " but rank 2 (M, C) or rank 3 (B, T, C) was expected");
  }
  // dout fixes the others' extents.
  const index_t C = dout.extent(rank - 1);
  const index_t M = rank == 3 ? dout.extent(0) * dout.extent(1) : dout.extent(0);
  for (const auto* a : {&a_inp, &a_dinp}) {
    if (rank == 2) expect_extents(kOpName, *a, {M, C}, "(M, C), the extents of dout");
    if (rank == 3)
      expect_extents(kOpName, *a, {dout.extent(0), dout.extent(1), C},
                     "(B, T, C), the extents of dout");
  }
  const auto args = {a_dinp, a_dout, a_inp};
  detail::check_storage(kOpName, args);
  detail::check_memory_space<ExecSpace>(kOpName, args);
  Operands<ExecSpace> o;
  o.args = args;
  o.dinp = core::op::flattened(dinp, M * C);
  o.dout = core::op::flattened(dout, M * C);
  o.inp = core::op::flattened(inp, M * C);
  o.M = M, o.C = C;
  return o;
}

// The call's element type in each role of a configuration (Precision::roles()).
template <class ExecSpace>
std::array<core::op::RoleType, 2> role_types(const Operands<ExecSpace>& o) {
  return {{{"inputs", o.dout.dtype()}, {"dinp", o.dinp.dtype(), o.dinp.size() != 0}}};
}

template <class ExecSpace, class P>
Problem<ExecSpace, P> typed_problem(const Operands<ExecSpace>& o,
                                    const GeluBackwardOptions& options) {
  using core::op::typed_vector;
  Problem<ExecSpace, P> p;
  auto& a = p.args;
  a.dinp = typed_vector<typename P::dinp>(o.dinp);
  a.dout = typed_vector<typename P::in>(o.dout);
  a.inp = typed_vector<typename P::in>(o.inp);
  a.overwrite_dinp = options.dinp_update == Update::overwrite;
  p.M = o.M, p.C = o.C;
  return p;
}

template <class ExecSpace>
void dispatch(Context<ExecSpace>& ctx, const Operands<ExecSpace>& o,
              const GeluBackwardOptions& options) {
  core::op::check_same_type(kOpName, "dout", o.dout, {{"inp", &o.inp}},
                            "the inputs (dout, inp)");
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

const std::vector<GeluBackwardImplInfo>& gelu_backward_impls() {
  static const std::vector<GeluBackwardImplInfo> infos = core::op::impl_infos<Op>();
  return infos;
}

const std::vector<std::string>& gelu_backward_precisions() {
  static const std::vector<std::string> names = core::op::precision_list<Op>();
  return names;
}

template <class ExecSpace>
bool gelu_backward_available(std::string_view impl) {
  return core::op::available<Op, ExecSpace>(impl);
}

template <class ExecSpace>
std::string gelu_backward_auto_impl(std::string_view precision) {
  return core::op::auto_impl<Op, ExecSpace>(precision, Math::fp32);
}

template <class ExecSpace>
std::size_t gelu_backward_workspace_bytes(index_t N, const GeluBackwardOptions& options,
                                          std::string_view precision) {
  return core::op::workspace_bytes<Op, ExecSpace>(Sizes{N, 1}, options.impl, Math::fp32,
                                                  precision);
}

// --- the entry points ---------------------------------------------------------

template <class ExecSpace>
void gelu_backward(Context<ExecSpace>& ctx, const Out<ExecSpace>& dinp,
                   const In<ExecSpace>& dout, const In<ExecSpace>& inp,
                   const GeluBackwardOptions& options) {
  dispatch(ctx, validated<ExecSpace>(dinp, dout, inp), options);
}

template <class ExecSpace>
void gelu_backward(Context<ExecSpace>& ctx, BufferRef dinp, ConstBufferRef dout,
                   ConstBufferRef inp, index_t N, const GeluBackwardOptions& options) {
  core::op::check_dimensions(kOpName, {{"N", N}});
  // Each array's N elements, bounded before any reference is made of them.
  core::checked_product(1, N, kOpName, "the elements of dout, inp and dinp, 1·N");
  // As N rows of one element (a view's rank 2 with C = 1).
  gelu_backward(ctx, Out<ExecSpace>(dinp, {N, 1}), In<ExecSpace>(dout, {N, 1}),
                In<ExecSpace>(inp, {N, 1}), options);
}

template <class ExecSpace>
void gelu_backward(const ExecSpace& exec, const Out<ExecSpace>& dinp, const In<ExecSpace>& dout,
                   const In<ExecSpace>& inp, const GeluBackwardOptions& options) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  gelu_backward(ctx, dinp, dout, inp, options);
}

template <class ExecSpace>
void gelu_backward(const ExecSpace& exec, BufferRef dinp, ConstBufferRef dout,
                   ConstBufferRef inp, index_t N, const GeluBackwardOptions& options) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  gelu_backward(ctx, dinp, dout, inp, N, options);
}

#define LLMK_INSTANTIATE_GELU_BACKWARD(Space)                                                   \
  template bool gelu_backward_available<Space>(std::string_view);                             \
  template std::string gelu_backward_auto_impl<Space>(std::string_view);                      \
  template std::size_t gelu_backward_workspace_bytes<Space>(index_t, const GeluBackwardOptions&, \
                                                            std::string_view);                \
  template void gelu_backward<Space>(Context<Space>&, const Out<Space>&, const In<Space>&,     \
                                     const In<Space>&, const GeluBackwardOptions&);            \
  template void gelu_backward<Space>(Context<Space>&, BufferRef, ConstBufferRef, ConstBufferRef, \
                                     index_t, const GeluBackwardOptions&);                     \
  template void gelu_backward<Space>(const Space&, const Out<Space>&, const In<Space>&,        \
                                     const In<Space>&, const GeluBackwardOptions&);            \
  template void gelu_backward<Space>(const Space&, BufferRef, ConstBufferRef, ConstBufferRef,   \
                                     index_t, const GeluBackwardOptions&);
LLMK_FOR_EACH_SPACE(LLMK_INSTANTIATE_GELU_BACKWARD)

}  // namespace llmk
