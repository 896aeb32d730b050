// "cublas" for attention_backward (src/ops/attention_backward/cublas.hpp
// says what it computes): the four products as cuBLAS strided-batched GEMMs
// on qkv's, dout's and dqkv's own rows, through the shared wrapper's GemmEx
// (gemm.hpp), all described and checked before the first launch; the T × T
// steps between them by kernels/attention_backward.hpp.
#include "gemm.hpp"

#include <kernels/attention_backward.hpp>
#include <ops/attention_backward/cublas.hpp>

#include <algorithm>
#include <type_traits>
#include <vector>

namespace llmk::op::attention_backward {
namespace {

namespace cb = backends::cublas;

// One launch's batch: every head of sequence `outer` (batches h, NH of them)
// or one head `outer` of every sequence (batches b, B of them), whichever
// loop is shorter. An operand's batch stride and first element follow.
struct Batching {
  bool by_sequence = true;  // the loop over b; else over h
  index_t launches = 0, batch = 0;
  index_t T = 0, C = 0, NH = 1, HS = 0;

  explicit Batching(const Sizes& s)
      : by_sequence(s.M <= s.NH),
        launches(by_sequence ? s.M : s.NH),
        batch(by_sequence ? s.NH : s.M),
        T(s.T),
        C(s.C),
        NH(s.NH),
        HS(s.C / s.NH) {}

  // Head batches of a (B·T) × ld array: head h of sequence b at b·T·ld + h·HS.
  index_t row_first(const index_t outer, const index_t ld) const {
    return by_sequence ? outer * T * ld : outer * HS;
  }
  index_t row_stride(const index_t ld) const { return by_sequence ? HS : T * ld; }
  // T × T matrices, (b, h)'s at (b·NH + h)·T·T.
  index_t tt_first(const index_t outer) const { return by_sequence ? outer * NH * T * T : outer * T * T; }
  index_t tt_stride() const { return by_sequence ? T * T : NH * T * T; }
};

template <class T>
cb::Input head_input(const T* data, const Batching& bt, const index_t outer, const index_t ld) {
  return {data + bt.row_first(outer, ld), ld, backends::cuda_type<T>(), bt.row_stride(ld)};
}
template <class T>
cb::Output head_output(T* data, const Batching& bt, const index_t outer, const index_t ld) {
  return {data + bt.row_first(outer, ld), ld, backends::cuda_type<T>(), bt.row_stride(ld)};
}
template <class T>
cb::Input tt_input(const T* data, const Batching& bt, const index_t outer) {
  return {data + bt.tt_first(outer), bt.T, backends::cuda_type<T>(), bt.tt_stride()};
}
template <class T>
cb::Output tt_output(T* data, const Batching& bt, const index_t outer) {
  return {data + bt.tt_first(outer), bt.T, backends::cuda_type<T>(), bt.tt_stride()};
}

cb::Gemm product(const char* what, const Batching& bt, const index_t m, const index_t n,
                 const index_t k, const cb::Op op_a, const cb::Op op_b, const float alpha,
                 const float beta, const cb::Compute compute) {
  cb::Gemm g;
  g.what = what;
  g.m = m, g.n = n, g.k = k;
  g.op_a = op_a, g.op_b = op_b;
  g.alpha = alpha, g.beta = beta;
  g.compute = compute;
  g.batch = bt.batch;
  return g;
}

}  // namespace

template <class ExecSpace, class P>
void cublas_run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
  static_assert(std::is_same_v<ExecSpace, Kokkos::Cuda>, "cuBLAS runs on Kokkos::Cuda only");
  using TIn = typename P::in;
  using TD = typename P::dqkv;
  using TW = TIn;  // W: att (masked), then dpreatt
  const Sizes s = p.sizes();
  const auto& a = p.args;
  const index_t T = s.T, C = s.C, HS = C / s.NH;
  const Batching bt(s);
  // Everything that can fail comes first, before any launch: the handle, the
  // workspace, every GEMM's checks.
  const auto& handle = call.ctx.template resource<backends::CublasHandle>();
  const std::size_t tt = Cublas::tt_elements(s);
  TW* const w = call.workspace.template take<TW>(tt);
  float* const scores = Cublas::float_inputs<P> ? reinterpret_cast<float*>(w)
                                                : call.workspace.template take<float>(tt);
  const cb::Compute compute = Cublas::float_inputs<P> && call.options.math == Math::tf32
                                  ? cb::Compute::tf32
                                  : cb::Compute::fp32;
  const float beta = a.overwrite ? 0.0f : 1.0f;
  const TIn* const q = a.qkv;
  const TIn* const k = a.qkv + C;
  const TIn* const v = a.qkv + 2 * C;
  std::vector<cb::GemmEx> dv, datt, dq, dk;
  for (index_t outer = 0; outer < bt.launches; ++outer) {
    cb::Gemm g = product("dv", bt, T, HS, T, cb::Op::T, cb::Op::N, 1.0f, beta, compute);
    g.a = tt_input<TW>(w, bt, outer);
    g.b = head_input(a.dout, bt, outer, C);
    g.d = head_output(a.dqkv + 2 * C, bt, outer, 3 * C);
    dv.emplace_back(g);
    g = product("datt", bt, T, T, HS, cb::Op::N, cb::Op::T, 1.0f, 0.0f, compute);
    g.a = head_input(a.dout, bt, outer, C);
    g.b = head_input(v, bt, outer, 3 * C);
    g.d = tt_output(scores, bt, outer);
    datt.emplace_back(g);
    g = product("dq", bt, T, HS, T, cb::Op::N, cb::Op::N, a.alpha, beta, compute);
    g.a = tt_input<TW>(w, bt, outer);
    g.b = head_input(k, bt, outer, 3 * C);
    g.d = head_output(a.dqkv, bt, outer, 3 * C);
    dq.emplace_back(g);
    g = product("dk", bt, T, HS, T, cb::Op::T, cb::Op::N, a.alpha, beta, compute);
    g.a = tt_input<TW>(w, bt, outer);
    g.b = head_input(q, bt, outer, 3 * C);
    g.d = head_output(a.dqkv + C, bt, outer, 3 * C);
    dk.emplace_back(g);
  }

  const index_t rows = s.M * s.NH * T;
  kernels::attention_masked_copy(call.exec, a.att, w, rows, T);
  for (const cb::GemmEx& g : dv) g.launch(handle);
  for (const cb::GemmEx& g : datt) g.launch(handle);
  kernels::attention_softmax_backward(call.exec, a.att, scores, w, rows, T);
  for (const cb::GemmEx& g : dq) g.launch(handle);
  for (const cb::GemmEx& g : dk) g.launch(handle);
}

#define LLMK_INSTANTIATE_CUBLAS(P) \
  template void cublas_run<Kokkos::Cuda, P>(Call<Kokkos::Cuda>&, const Problem<Kokkos::Cuda, P>&);
LLMK_INSTANTIATE_CUBLAS(Fp32)
LLMK_INSTANTIATE_CUBLAS(Bf16)
#undef LLMK_INSTANTIATE_CUBLAS

}  // namespace llmk::op::attention_backward
