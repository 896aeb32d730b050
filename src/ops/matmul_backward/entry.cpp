// The entry points of the matmul backward: validate, reshape to rank 2, then
// hand over to the shared framework (core/op/): match the element types to a
// precision configuration (precisions.hpp), choose the implementation
// (op.hpp's list), acquire what the call needs, run it over chunks of rows.
// Explicit instantiations for every space (spaces.hpp).
#include <core/spaces.hpp>
#include <core/validate.hpp>
#include <core/op/queries.hpp>
#include <ops/matmul_backward/op.hpp>

#include <array>
#include <stdexcept>
#include <string>

namespace llmk {
namespace {

using namespace op::matmul_backward;

// The arguments of a call after the shape checks, all of rank 2 (an absent
// dbias or pre_gelu has rank 0), element types not yet matched.
template <class ExecSpace>
struct Operands {
  TensorRef<ExecSpace> dinp, dweight, dbias;
  ConstTensorRef<ExecSpace> dout, inp, weight, pre_gelu;
  index_t M = 0, C = 0, OC = 0;
  detail::Arguments args;  // as checked: the user workspace must overlap none
};

// --- element types ------------------------------------------------------------

// The call's element type in each role of a configuration (Precision::roles()).
template <class ExecSpace>
std::array<core::op::RoleType, 4> role_types(const Operands<ExecSpace>& o) {
  return {{{"inputs", o.dout.dtype()},
           {"dinp", o.dinp.dtype(), o.dinp.size() != 0},
           {"dweight", o.dweight.dtype(), o.dweight.size() != 0},
           {"dbias", o.dbias.dtype(), o.dbias.size() != 0}}};
}

// The inputs share dout's element type.
template <class ExecSpace>
void check_input_types(const Operands<ExecSpace>& o) {
  core::op::check_same_type(kOpName, "dout", o.dout,
                            {{"inp", &o.inp}, {"weight", &o.weight}, {"pre_gelu", &o.pre_gelu}},
                            "the inputs (dout, inp, weight, pre_gelu)");
}

template <class ExecSpace, class P>
Problem<ExecSpace, P> typed_problem(const Operands<ExecSpace>& o,
                                    const MatmulBackwardOptions& options) {
  using core::op::typed_matrix;
  using In = typename P::in;
  const index_t M = o.M, C = o.C, OC = o.OC;
  Problem<ExecSpace, P> p;
  p.dinp = typed_matrix<typename P::dinp>(o.dinp, M, C);
  p.dweight = typed_matrix<typename P::dweight>(o.dweight, OC, C);
  p.dbias = core::op::typed_vector<typename P::dbias>(o.dbias);
  p.dout = typed_matrix<In>(o.dout, M, OC);
  p.inp = typed_matrix<In>(o.inp, M, C);
  p.weight = typed_matrix<In>(o.weight, OC, C);
  p.pre_gelu = typed_matrix<In>(o.pre_gelu, M, C);
  p.M = M, p.C = C, p.OC = OC;
  p.overwrite_dinp = options.dinp_update == Update::overwrite;
  p.overwrite_dweight = options.dweight_update == Update::overwrite;
  p.overwrite_dbias = options.dbias_update == Update::overwrite;
  return p;
}

// The call's precision configuration and implementation, then the call.
template <class ExecSpace>
void dispatch(Context<ExecSpace>& ctx, const Operands<ExecSpace>& o,
              const MatmulBackwardOptions& options) {
  check_input_types(o);
  core::op::with_matching_precision<Precisions>(kOpName, role_types(o), [&](auto ptag) {
    using P = typename decltype(ptag)::type;
    const Problem<ExecSpace, P> p = typed_problem<ExecSpace, P>(o, options);
    core::op::with_impl<Op, ExecSpace, P>(options.impl, options.math, p.sizes(), [&](auto tag) {
      using I = typename decltype(tag)::type;
      core::op::run_impl<Op, I, ExecSpace, P>(ctx.state(), p, o.args, options);
    });
  });
}

// --- shapes -------------------------------------------------------------------

// The shape and storage checks; the activations (dout, inp, dinp, pre_gelu)
// may be rank 3 (B, T, ·) and are flattened to (B·T, ·).
template <class ExecSpace>
Operands<ExecSpace> validated(const TensorRef<ExecSpace>& dinp, const TensorRef<ExecSpace>& dweight,
                              const TensorRef<ExecSpace>& dbias,
                              const ConstTensorRef<ExecSpace>& dout,
                              const ConstTensorRef<ExecSpace>& inp,
                              const ConstTensorRef<ExecSpace>& weight,
                              const ConstTensorRef<ExecSpace>& pre_gelu) {
  using detail::arg_info;
  const auto a_dout = arg_info("dout", dout, false);
  const auto a_weight = arg_info("weight", weight, false);
  const auto a_inp = arg_info("inp", inp, false);
  const auto a_pre = arg_info("pre_gelu", pre_gelu, false);
  const auto a_dinp = arg_info("dinp", dinp, true);
  const auto a_dweight = arg_info("dweight", dweight, true);
  const auto a_dbias = arg_info("dbias", dbias, true);
  if (dout.rank() != 2 && dout.rank() != 3) {
    throw std::invalid_argument(std::string(kOpName) + ": argument 'dout' has extents " +
                                detail::extents_string(a_dout) +
                                " but rank 2 (M, OC) or rank 3 (B, T, OC) was expected");
  }
  // dout fixes the rows and OC; weight's rows must be OC and fix C.
  const bool rank3 = dout.rank() == 3;
  const index_t B = dout.extent(0), T = rank3 ? dout.extent(1) : 1;
  const index_t OC = dout.extent(dout.rank() - 1), C = weight.extent(1), M = B * T;
  detail::expect_extents(kOpName, a_weight, {OC, C}, "(OC, C) with OC from dout's last extent");
  if (rank3) {
    const char* how = "(B, T, C) with B, T from dout and C from weight's columns";
    detail::expect_extents(kOpName, a_inp, {B, T, C}, how);
    detail::expect_extents(kOpName, a_dinp, {B, T, C}, "(B, T, C), the extents of inp");
    if (!pre_gelu.empty())
      detail::expect_extents(kOpName, a_pre, {B, T, C}, "(B, T, C), the extents of inp");
  } else {
    detail::expect_extents(kOpName, a_inp, {M, C},
                           "(M, C) with M from dout's rows and C from weight's columns");
    detail::expect_extents(kOpName, a_dinp, {M, C}, "(M, C), the extents of inp");
    if (!pre_gelu.empty())
      detail::expect_extents(kOpName, a_pre, {M, C}, "(M, C), the extents of inp");
  }
  detail::expect_extents(kOpName, a_dweight, {OC, C}, "(OC, C), the extents of weight");
  if (dbias.size() != 0)
    detail::expect_extents(kOpName, a_dbias, {OC}, "(OC) from dout's columns (or an empty view)");
  const auto args = {a_dinp, a_dweight, a_dbias, a_dout, a_inp, a_weight, a_pre};
  detail::check_storage(kOpName, args);
  detail::check_memory_space<ExecSpace>(kOpName, args);
  Operands<ExecSpace> o;
  o.args = args;
  o.dinp = core::op::flattened(dinp, M, C);
  o.dweight = dweight;
  o.dbias = dbias;
  o.dout = core::op::flattened(dout, M, OC);
  o.inp = core::op::flattened(inp, M, C);
  o.weight = weight;
  o.pre_gelu = core::op::flattened(pre_gelu, M, C);
  o.M = M, o.C = C, o.OC = OC;
  return o;
}

}  // namespace

template <class ExecSpace>
std::size_t matmul_backward_workspace_bytes(index_t M, index_t C, index_t OC, bool has_bias,
                                            const MatmulBackwardOptions& options,
                                            std::string_view precision, bool has_gelu) {
  const Sizes s{M, C, OC, has_bias, has_gelu, options.dinp_update == Update::overwrite,
                options.dweight_update == Update::overwrite};
  return core::op::workspace_bytes<Op, ExecSpace>(s, options.impl, options.math, precision);
}

// --- the entry points ---------------------------------------------------------

template <class ExecSpace>
void matmul_backward(Context<ExecSpace>& ctx, const Out<ExecSpace>& dinp,
                     const Out<ExecSpace>& dweight, const Out<ExecSpace>& dbias,
                     const In<ExecSpace>& dout, const In<ExecSpace>& inp,
                     const In<ExecSpace>& weight, const In<ExecSpace>& pre_gelu,
                     const MatmulBackwardOptions& options) {
  dispatch(ctx, validated<ExecSpace>(dinp, dweight, dbias, dout, inp, weight, pre_gelu), options);
}

template <class ExecSpace>
void matmul_backward(Context<ExecSpace>& ctx, const Out<ExecSpace>& dinp,
                     const Out<ExecSpace>& dweight, const Out<ExecSpace>& dbias,
                     const In<ExecSpace>& dout, const In<ExecSpace>& inp,
                     const In<ExecSpace>& weight, const MatmulBackwardOptions& options) {
  matmul_backward(ctx, dinp, dweight, dbias, dout, inp, weight, In<ExecSpace>(), options);
}

template <class ExecSpace>
void matmul_backward(Context<ExecSpace>& ctx, BufferRef dinp, BufferRef dweight, BufferRef dbias,
                     ConstBufferRef dout, ConstBufferRef inp, ConstBufferRef weight,
                     ConstBufferRef pre_gelu, index_t B, index_t T, index_t C, index_t OC,
                     const MatmulBackwardOptions& options) {
  core::op::check_dimensions(kOpName, {{"B", B}, {"T", T}, {"C", C}, {"OC", OC}});
  // Every array's element count, checked before any reference is made of it.
  const index_t M = core::checked_product(B, T, kOpName, "M = B·T");
  core::checked_product(M, C, kOpName, "the elements of inp and dinp, M·C");
  core::checked_product(M, OC, kOpName, "the elements of dout, M·OC");
  core::checked_product(OC, C, kOpName, "the elements of weight and dweight, OC·C");
  // (dbias's OC elements are bounded apart: with B·T = 0 and C = 0 every
  // product above is 0.)
  core::checked_product(1, OC, kOpName, "the elements of dbias, 1·OC");
  // A null dbias means "no bias gradient", a null pre_gelu "no GELU".
  matmul_backward(ctx, Out<ExecSpace>(dinp, {M, C}), Out<ExecSpace>(dweight, {OC, C}),
                  dbias.data ? Out<ExecSpace>(dbias, {OC}) : Out<ExecSpace>(),
                  In<ExecSpace>(dout, {M, OC}), In<ExecSpace>(inp, {M, C}),
                  In<ExecSpace>(weight, {OC, C}),
                  pre_gelu.data ? In<ExecSpace>(pre_gelu, {M, C}) : In<ExecSpace>(), options);
}

template <class ExecSpace>
void matmul_backward(Context<ExecSpace>& ctx, BufferRef dinp, BufferRef dweight, BufferRef dbias,
                     ConstBufferRef dout, ConstBufferRef inp, ConstBufferRef weight, index_t B,
                     index_t T, index_t C, index_t OC, const MatmulBackwardOptions& options) {
  matmul_backward(ctx, dinp, dweight, dbias, dout, inp, weight, nullptr, B, T, C, OC, options);
}

template <class ExecSpace>
void matmul_backward_bias_pass(Context<ExecSpace>& ctx, const Out<ExecSpace>& dbias,
                               const In<ExecSpace>& dout, std::string_view impl,
                               const MatmulBackwardOptions& options) {
  if (dout.rank() != 2)
    throw std::invalid_argument(std::string(kOpName) + "_bias_pass: dout must be rank 2 (M, OC)");
  const index_t M = dout.extent(0), OC = dout.extent(1);
  detail::expect_extents(kOpName, detail::arg_info("dbias", dbias, true), {OC},
                         "(OC) from dout's columns");
  const auto args = {detail::arg_info("dbias", dbias, true), detail::arg_info("dout", dout, false)};
  detail::check_storage(kOpName, args);
  detail::check_memory_space<ExecSpace>(kOpName, args);
  const std::array<core::op::RoleType, 4> types = {{{"inputs", dout.dtype()},
                                                    {"dinp", DType::f32, false},
                                                    {"dweight", DType::f32, false},
                                                    {"dbias", dbias.dtype(), dbias.size() != 0}}};
  core::op::with_matching_precision<Precisions>(kOpName, types, [&](auto ptag) {
    using P = typename decltype(ptag)::type;
    const ConstMatrix<ExecSpace, typename P::in> typed_dout =
        core::op::typed_matrix<typename P::in>(dout, M, OC);
    const Vector<ExecSpace, typename P::dbias> typed_dbias =
        core::op::typed_vector<typename P::dbias>(dbias);
    core::op::with_impl<Op, ExecSpace, P>(impl, Math::fp32, Sizes{M, 0, OC, true}, [&](auto tag) {
      using I = typename decltype(tag)::type;
      if constexpr (I::bias == BiasPass::Fused) {
        throw std::invalid_argument(std::string(kOpName) + "_bias_pass: implementation '" +
                                    std::string(I::name) + "' fuses dbias into a GEMM");
      } else {
        core::WorkspaceSize size;
        add_bias_pass_workspace<ExecSpace>(size, I::bias, M, OC);
        const auto bias_pass = [&](Call<ExecSpace>& call) {
          if (M > 0 && OC > 0)
            run_bias_pass(I::bias, call, typed_dbias, typed_dout,
                          options.dbias_update == Update::overwrite);
        };
        core::op::with_call(kOpName, ctx.state(), size.bytes(), detail::Arguments(args), options,
                            bias_pass);
      }
    });
  });
}

LLMK_DEFINE_QUERIES(MatmulBackward, ::llmk::op::matmul_backward::Op)

#define LLMK_INSTANTIATE_MATMUL_BACKWARD(Space)                                                  \
  template std::size_t matmul_backward_workspace_bytes<Space>(                                  \
      index_t, index_t, index_t, bool, const MatmulBackwardOptions&, std::string_view, bool);   \
  template void matmul_backward<Space>(Context<Space>&, const Out<Space>&, const Out<Space>&,   \
                                       const Out<Space>&, const In<Space>&, const In<Space>&,   \
                                       const In<Space>&, const MatmulBackwardOptions&);         \
  template void matmul_backward<Space>(Context<Space>&, const Out<Space>&, const Out<Space>&,   \
                                       const Out<Space>&, const In<Space>&, const In<Space>&,   \
                                       const In<Space>&, const In<Space>&,                      \
                                       const MatmulBackwardOptions&);                           \
  template void matmul_backward<Space>(Context<Space>&, BufferRef, BufferRef, BufferRef,        \
      ConstBufferRef, ConstBufferRef, ConstBufferRef, index_t, index_t, index_t, index_t,       \
      const MatmulBackwardOptions&);                                                            \
  template void matmul_backward<Space>(Context<Space>&, BufferRef, BufferRef, BufferRef,        \
      ConstBufferRef, ConstBufferRef, ConstBufferRef, ConstBufferRef, index_t, index_t,         \
      index_t, index_t, const MatmulBackwardOptions&);                                          \
  template void matmul_backward_bias_pass<Space>(Context<Space>&, const Out<Space>&,            \
                                                 const In<Space>&, std::string_view,            \
                                                 const MatmulBackwardOptions&);
LLMK_FOR_EACH_SPACE(LLMK_INSTANTIATE_MATMUL_BACKWARD)

}  // namespace llmk
