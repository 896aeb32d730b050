// The entry points of the matmul backward: the declared call
// (core/op/entry.hpp over op.hpp), the bias pass the benchmarks time alone,
// the queries, and their instantiations for every space.
#include <core/op/queries.hpp>
#include <core/spaces.hpp>
#include <core/validate.hpp>
#include <ops/matmul_backward/op.hpp>

#include <array>
#include <stdexcept>
#include <string>

namespace llmk {

using namespace op::matmul_backward;

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
  core::op::call<Op>(
      ctx, options,
      std::array<core::op::Operand, 7>{dinp, dweight, dbias, dout, inp, weight, pre_gelu});
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
