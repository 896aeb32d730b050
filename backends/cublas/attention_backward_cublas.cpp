// "cublas" for attention_backward (src/ops/attention_backward/cublas.hpp
// says what it computes): the four products of each block of query rows as
// cuBLAS batched GEMMs on qkv's, dout's and dqkv's own rows, through the
// shared wrapper's GemmEx (gemm.hpp), all described and checked before the
// first launch; the T × T steps between them by kernels/attention_backward.hpp.
#include "gemm.hpp"

#include <kernels/attention_backward.hpp>
#include <ops/attention_backward/cublas.hpp>

#include <algorithm>
#include <type_traits>
#include <vector>

namespace llmk::op::attention_backward {
namespace {

namespace cb = backends::cublas;

// The heads of one launch: NH batches (b, h) of every sequence b, h's at
// stride HS inside a row, in B groups of T rows; the T × T matrices of
// (b, h) at (b·NH + h)·T·T. `row` and `col` offset a row-major operand to
// its block.
struct Heads {
  index_t B = 0, T = 0, NH = 1, HS = 0;

  explicit Heads(const Sizes& s) : B(s.M), T(s.T), NH(s.NH), HS(s.C / s.NH) {}

  template <class T_>
  cb::Input rows(const T_* data, const index_t ld, const index_t row) const {
    return {data + row * ld, ld, backends::cuda_type<T_>(), HS, T * ld};
  }
  template <class T_>
  cb::Output rows_out(T_* data, const index_t ld, const index_t row) const {
    return {data + row * ld, ld, backends::cuda_type<T_>(), HS, T * ld};
  }
  template <class T_>
  cb::Input tt(const T_* data, const index_t row, const index_t col) const {
    return {data + row * T + col, T, backends::cuda_type<T_>(), T * T, NH * T * T};
  }
  template <class T_>
  cb::Output tt_out(T_* data, const index_t row, const index_t col) const {
    return {data + row * T + col, T, backends::cuda_type<T_>(), T * T, NH * T * T};
  }
};

cb::Gemm product(const char* what, const Heads& heads, const index_t m, const index_t n,
                 const index_t k, const cb::Op op_a, const cb::Op op_b, const float alpha,
                 const float beta, const cb::Compute compute) {
  cb::Gemm g;
  g.what = what;
  g.m = m, g.n = n, g.k = k;
  g.op_a = op_a, g.op_b = op_b;
  g.alpha = alpha, g.beta = beta;
  g.compute = compute;
  g.batch = heads.NH;
  g.groups = heads.B;
  return g;
}

}  // namespace

template <class ExecSpace, class P>
void cublas_run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
  static_assert(std::is_same_v<ExecSpace, Kokkos::Cuda>, "cuBLAS runs on Kokkos::Cuda only");
  using TIn = typename P::in;
  const Sizes s = p.sizes();
  const auto& a = p.args;
  const index_t T = s.T, C = s.C, HS = C / s.NH;
  const Heads heads(s);
  // Everything that can fail comes first, before any launch: the handle, the
  // workspace, every GEMM's checks.
  const auto& handle = call.ctx.template resource<backends::CublasHandle>();
  const std::size_t tt = Cublas::tt_elements(s);
  TIn* const scores = call.workspace.template take<TIn>(tt);  // S, then P in place
  TIn* const masked = call.workspace.template take<TIn>(tt);  // A
  TIn* const dpre = scores;
  const std::size_t pointers = Cublas::pointer_count<P>(s);
  cb::GemmPointerArrays arrays(call.workspace.template take<const void*>(pointers), pointers);
  const cb::Compute compute = Cublas::float_inputs<P> && call.options.math == Math::tf32
                                  ? cb::Compute::tf32
                                  : cb::Compute::fp32;
  const float beta = a.overwrite ? 0.0f : 1.0f;
  const TIn* const q = a.qkv;
  const TIn* const k = a.qkv + C;
  const TIn* const v = a.qkv + 2 * C;
  const index_t block = Cublas::row_block<P>(s);
  std::vector<cb::GemmEx> datt, later;
  for (index_t r0 = 0; r0 < T; r0 += block) {
    const index_t r1 = std::min(T, r0 + block), rows = r1 - r0;
    cb::Gemm g = product("datt", heads, rows, r1, HS, cb::Op::N, cb::Op::T, 1.0f, 0.0f, compute);
    g.a = heads.rows(a.dout, C, r0);
    g.b = heads.rows(v, 3 * C, 0);
    g.d = heads.tt_out(scores, r0, 0);
    datt.emplace_back(g);
    g = product("dq", heads, rows, HS, r1, cb::Op::N, cb::Op::N, a.alpha, beta, compute);
    g.a = heads.tt<TIn>(dpre, r0, 0);
    g.b = heads.rows(k, 3 * C, 0);
    g.d = heads.rows_out(a.dqkv, 3 * C, r0);
    later.emplace_back(g);
    g = product("dv", heads, rows, HS, T - r0, cb::Op::T, cb::Op::N, 1.0f, beta, compute);
    g.a = heads.tt<TIn>(masked, r0, r0);
    g.b = heads.rows(a.dout, C, r0);
    g.d = heads.rows_out(a.dqkv + 2 * C, 3 * C, r0);
    later.emplace_back(g);
    g = product("dk", heads, rows, HS, T - r0, cb::Op::T, cb::Op::N, a.alpha, beta, compute);
    g.a = heads.tt<TIn>(dpre, r0, r0);
    g.b = heads.rows(q, 3 * C, r0);
    g.d = heads.rows_out(a.dqkv + C, 3 * C, r0);
    later.emplace_back(g);
  }
  for (cb::GemmEx& g : datt) arrays.add(g);
  for (cb::GemmEx& g : later) arrays.add(g);

  arrays.write(call.exec);
  for (const cb::GemmEx& g : datt) g.launch(handle);
  kernels::attention_softmax_backward(call.exec, a.att, scores, dpre, s.M * s.NH * T, T, masked,
                                      block);
  for (const cb::GemmEx& g : later) g.launch(handle);
}

#define LLMK_INSTANTIATE_CUBLAS(P) \
  template void cublas_run<Kokkos::Cuda, P>(Call<Kokkos::Cuda>&, const Problem<Kokkos::Cuda, P>&);
LLMK_INSTANTIATE_CUBLAS(Fp32)
LLMK_INSTANTIATE_CUBLAS(Bf16)
#undef LLMK_INSTANTIATE_CUBLAS

}  // namespace llmk::op::attention_backward
