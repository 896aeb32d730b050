// The entry points of the layer-norm backward: validate and flatten the
// arguments, then hand over to the shared framework (core/op/): precision
// matching (precisions.hpp), the implementation (op.hpp's list), the call with
// its context, chunks and queries. Explicit instantiations for every space.
#include <core/op/queries.hpp>
#include <core/spaces.hpp>
#include <core/validate.hpp>
#include <ops/layernorm_backward/op.hpp>

#include <array>
#include <stdexcept>
#include <string>

namespace llmk {
namespace {

using namespace op::layernorm_backward;

// The arguments of a call after the shape checks: activations (M, C), mean
// and rstd (M), element types not yet matched.
template <class ExecSpace>
struct Operands {
  TensorRef<ExecSpace> dinp, dweight, dbias;
  ConstTensorRef<ExecSpace> dout, inp, weight, mean, rstd;
  index_t M = 0, C = 0;
  detail::Arguments args;  // as checked: the user workspace must overlap none
};

template <class ExecSpace>
Operands<ExecSpace> validated(const Out<ExecSpace>& dinp, const Out<ExecSpace>& dweight,
                              const Out<ExecSpace>& dbias, const In<ExecSpace>& dout,
                              const In<ExecSpace>& inp, const In<ExecSpace>& weight,
                              const In<ExecSpace>& mean, const In<ExecSpace>& rstd) {
  using detail::arg_info;
  using detail::expect_extents;
  const auto a_dinp = arg_info("dinp", dinp, true);
  const auto a_dweight = arg_info("dweight", dweight, true);
  const auto a_dbias = arg_info("dbias", dbias, true);
  const auto a_dout = arg_info("dout", dout, false);
  const auto a_inp = arg_info("inp", inp, false);
  const auto a_weight = arg_info("weight", weight, false);
  const auto a_mean = arg_info("mean", mean, false);
  const auto a_rstd = arg_info("rstd", rstd, false);
  if (dout.rank() != 2 && dout.rank() != 3) {
    throw std::invalid_argument(std::string(kOpName) + ": argument 'dout' has extents " +
                                detail::extents_string(a_dout) +
                                " but rank 2 (M, C) or rank 3 (B, T, C) was expected");
  }
  // dout fixes the rows and C.
  const bool rank3 = dout.rank() == 3;
  const index_t B = dout.extent(0), T = rank3 ? dout.extent(1) : 1;
  const index_t C = dout.extent(dout.rank() - 1), M = B * T;
  if (rank3) {
    for (const auto* a : {&a_inp, &a_dinp})
      expect_extents(kOpName, *a, {B, T, C}, "(B, T, C), the extents of dout");
    for (const auto* a : {&a_mean, &a_rstd})
      expect_extents(kOpName, *a, {B, T}, "(B, T) from dout's extents");
  } else {
    for (const auto* a : {&a_inp, &a_dinp})
      expect_extents(kOpName, *a, {M, C}, "(M, C), the extents of dout");
    for (const auto* a : {&a_mean, &a_rstd})
      expect_extents(kOpName, *a, {M}, "(M) from dout's rows");
  }
  for (const auto* a : {&a_weight, &a_dweight})
    expect_extents(kOpName, *a, {C}, "(C) from dout's last extent");
  if (dbias.size() != 0)
    expect_extents(kOpName, a_dbias, {C}, "(C) from dout's last extent (or an empty view)");
  const auto args = {a_dinp, a_dweight, a_dbias, a_dout, a_inp, a_weight, a_mean, a_rstd};
  detail::check_storage(kOpName, args);
  detail::check_memory_space<ExecSpace>(kOpName, args);
  Operands<ExecSpace> o;
  o.args = args;
  o.dinp = core::op::flattened(dinp, M, C);
  o.dweight = dweight;
  o.dbias = dbias;
  o.dout = core::op::flattened(dout, M, C);
  o.inp = core::op::flattened(inp, M, C);
  o.weight = weight;
  o.mean = core::op::flattened(mean, M);
  o.rstd = core::op::flattened(rstd, M);
  o.M = M, o.C = C;
  return o;
}

// The call's element type in each role of a configuration (Precision::roles()).
template <class ExecSpace>
std::array<core::op::RoleType, 5> role_types(const Operands<ExecSpace>& o) {
  return {{{"inputs", o.dout.dtype()},
           {"dinp", o.dinp.dtype(), o.dinp.size() != 0},
           {"dweight", o.dweight.dtype(), o.dweight.size() != 0},
           {"dbias", o.dbias.dtype(), o.dbias.size() != 0},
           {"mean and rstd", o.mean.dtype(), o.mean.size() != 0}}};
}

template <class ExecSpace, class P>
Problem<ExecSpace, P> typed_problem(const Operands<ExecSpace>& o,
                                    const LayernormBackwardOptions& options) {
  using core::op::typed_matrix;
  using core::op::typed_vector;
  using In = typename P::in;
  Problem<ExecSpace, P> p;
  auto& a = p.args;
  a.dinp = typed_matrix<typename P::dinp>(o.dinp, o.M, o.C);
  a.dweight = typed_vector<typename P::dweight>(o.dweight);
  a.dbias = typed_vector<typename P::dbias>(o.dbias);
  a.dout = typed_matrix<In>(o.dout, o.M, o.C);
  a.inp = typed_matrix<In>(o.inp, o.M, o.C);
  a.weight = typed_vector<In>(o.weight);
  a.mean = typed_vector<float>(o.mean);
  a.rstd = typed_vector<float>(o.rstd);
  a.overwrite_dinp = options.dinp_update == Update::overwrite;
  a.overwrite_dweight = options.dweight_update == Update::overwrite;
  a.overwrite_dbias = options.dbias_update == Update::overwrite;
  p.M = o.M, p.C = o.C;
  return p;
}

template <class ExecSpace>
void dispatch(Context<ExecSpace>& ctx, const Operands<ExecSpace>& o,
              const LayernormBackwardOptions& options) {
  core::op::check_same_type(kOpName, "dout", o.dout, {{"inp", &o.inp}, {"weight", &o.weight}},
                            "the inputs (dout, inp, weight)");
  core::op::check_same_type(kOpName, "mean", o.mean, {{"rstd", &o.rstd}}, "mean and rstd");
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

const std::vector<LayernormBackwardImplInfo>& layernorm_backward_impls() {
  static const std::vector<LayernormBackwardImplInfo> infos = core::op::impl_infos<Op>();
  return infos;
}

const std::vector<std::string>& layernorm_backward_precisions() {
  static const std::vector<std::string> names = core::op::precision_list<Op>();
  return names;
}

template <class ExecSpace>
bool layernorm_backward_available(std::string_view impl) {
  return core::op::available<Op, ExecSpace>(impl);
}

template <class ExecSpace>
std::string layernorm_backward_auto_impl(std::string_view precision) {
  return core::op::auto_impl<Op, ExecSpace>(precision, Math::fp32);
}

template <class ExecSpace>
std::size_t layernorm_backward_workspace_bytes(index_t M, index_t C, bool has_bias,
                                               const LayernormBackwardOptions& options,
                                               std::string_view precision) {
  return core::op::workspace_bytes<Op, ExecSpace>(Sizes{M, C, has_bias}, options.impl,
                                                  Math::fp32, precision);
}

// --- the entry points ---------------------------------------------------------

template <class ExecSpace>
void layernorm_backward(Context<ExecSpace>& ctx, const Out<ExecSpace>& dinp,
                        const Out<ExecSpace>& dweight, const Out<ExecSpace>& dbias,
                        const In<ExecSpace>& dout, const In<ExecSpace>& inp,
                        const In<ExecSpace>& weight, const In<ExecSpace>& mean,
                        const In<ExecSpace>& rstd, const LayernormBackwardOptions& options) {
  dispatch(ctx, validated<ExecSpace>(dinp, dweight, dbias, dout, inp, weight, mean, rstd),
           options);
}

template <class ExecSpace>
void layernorm_backward(Context<ExecSpace>& ctx, BufferRef dinp, BufferRef dweight,
                        BufferRef dbias, ConstBufferRef dout, ConstBufferRef inp,
                        ConstBufferRef weight, const float* mean, const float* rstd, index_t B,
                        index_t T, index_t C, const LayernormBackwardOptions& options) {
  core::op::check_dimensions(kOpName, {{"B", B}, {"T", T}, {"C", C}});
  // Every array's element count, checked before any reference is made of it.
  const index_t M = core::checked_product(B, T, kOpName, "M = B·T");
  core::checked_product(M, C, kOpName, "the elements of dout, inp and dinp, M·C");
  // (weight's C elements are bounded apart: with B·T = 0 the product above is 0.)
  core::checked_product(1, C, kOpName, "the elements of weight, 1·C");
  // A null dbias means "no bias gradient".
  layernorm_backward(ctx, Out<ExecSpace>(dinp, {M, C}), Out<ExecSpace>(dweight, {C}),
                     dbias.data ? Out<ExecSpace>(dbias, {C}) : Out<ExecSpace>(),
                     In<ExecSpace>(dout, {M, C}), In<ExecSpace>(inp, {M, C}),
                     In<ExecSpace>(weight, {C}), In<ExecSpace>(mean, {M}),
                     In<ExecSpace>(rstd, {M}), options);
}

template <class ExecSpace>
void layernorm_backward(const ExecSpace& exec, const Out<ExecSpace>& dinp,
                        const Out<ExecSpace>& dweight, const Out<ExecSpace>& dbias,
                        const In<ExecSpace>& dout, const In<ExecSpace>& inp,
                        const In<ExecSpace>& weight, const In<ExecSpace>& mean,
                        const In<ExecSpace>& rstd, const LayernormBackwardOptions& options) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  layernorm_backward(ctx, dinp, dweight, dbias, dout, inp, weight, mean, rstd, options);
}

template <class ExecSpace>
void layernorm_backward(const ExecSpace& exec, BufferRef dinp, BufferRef dweight,
                        BufferRef dbias, ConstBufferRef dout, ConstBufferRef inp,
                        ConstBufferRef weight, const float* mean, const float* rstd, index_t B,
                        index_t T, index_t C, const LayernormBackwardOptions& options) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  layernorm_backward(ctx, dinp, dweight, dbias, dout, inp, weight, mean, rstd, B, T, C, options);
}

#define LLMK_INSTANTIATE_LAYERNORM_BACKWARD(Space)                                             \
  template bool layernorm_backward_available<Space>(std::string_view);                        \
  template std::string layernorm_backward_auto_impl<Space>(std::string_view);                 \
  template std::size_t layernorm_backward_workspace_bytes<Space>(                             \
      index_t, index_t, bool, const LayernormBackwardOptions&, std::string_view);             \
  template void layernorm_backward<Space>(Context<Space>&, const Out<Space>&, const Out<Space>&, \
                                          const Out<Space>&, const In<Space>&, const In<Space>&, \
                                          const In<Space>&, const In<Space>&, const In<Space>&,  \
                                          const LayernormBackwardOptions&);                    \
  template void layernorm_backward<Space>(Context<Space>&, BufferRef, BufferRef, BufferRef,     \
                                          ConstBufferRef, ConstBufferRef, ConstBufferRef,       \
                                          const float*, const float*, index_t, index_t, index_t, \
                                          const LayernormBackwardOptions&);                    \
  template void layernorm_backward<Space>(const Space&, const Out<Space>&, const Out<Space>&,   \
                                          const Out<Space>&, const In<Space>&, const In<Space>&, \
                                          const In<Space>&, const In<Space>&, const In<Space>&,  \
                                          const LayernormBackwardOptions&);                    \
  template void layernorm_backward<Space>(const Space&, BufferRef, BufferRef, BufferRef,        \
                                          ConstBufferRef, ConstBufferRef, ConstBufferRef,       \
                                          const float*, const float*, index_t, index_t, index_t, \
                                          const LayernormBackwardOptions&);
LLMK_FOR_EACH_SPACE(LLMK_INSTANTIATE_LAYERNORM_BACKWARD)

}  // namespace llmk
