// Development benchmark of kernels/layernorm_backward.hpp's blocked kernel on
// a CUDA GPU: several tunings side by side at GPT-2's shapes (B = 8, T = 1024,
// C = 768 and 1600) in fp32 and bf16, the main kernel alone and with its
// second pass, against a device copy of the bytes the operation moves, each
// tuning's outputs compared with the naive kernels'. Not part of the build:
// perf/dev/layernorm_bench.sh compiles it (docs/performance.md has what it
// measured on an H200).
#include <kernels/layernorm_backward.hpp>

#include "dev_timing.hpp"

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace {

using Space = Kokkos::Cuda;
using llmk::index_t;
using Base = llmk::kernels::LayernormTuning<Space>;

template <int TeamSize, int RowsPerBlock, int SubRows, int Vec, int ReduceThreads = 32>
struct Tune : Base {
  static constexpr int team_size = TeamSize;
  static constexpr int rows_per_block = RowsPerBlock;
  static constexpr int sub_rows = SubRows;
  static constexpr int vec = Vec;
  static constexpr int reduce_threads = ReduceThreads;
};

template <class T>
using Args = llmk::kernels::LayernormArgs<Space, T, T, float, float>;

template <class T>
Args<T> make_args(index_t M, index_t C) {
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  auto fill = [&](auto view, float lo, float hi) {
    auto h = Kokkos::create_mirror_view(view);
    for (std::size_t i = 0; i < h.span(); ++i)
      h.data()[i] = llmk::from_float<typename decltype(view)::value_type>(lo + (hi - lo) * (u(gen) + 1) / 2);
    Kokkos::deep_copy(view, h);
    return view;
  };
  Args<T> a;
  a.dinp = fill(llmk::Matrix<Space, T>("dinp", M, C), -1, 1);
  a.dweight = fill(llmk::Vector<Space>("dweight", C), -1, 1);
  a.dbias = fill(llmk::Vector<Space>("dbias", C), -1, 1);
  a.dout = fill(llmk::Matrix<Space, T>("dout", M, C), -1, 1);
  a.inp = fill(llmk::Matrix<Space, T>("inp", M, C), -2, 2);
  a.weight = fill(llmk::Vector<Space, T>("weight", C), -1, 1);
  a.mean = fill(llmk::Vector<Space>("mean", M), -0.1f, 0.1f);
  a.rstd = fill(llmk::Vector<Space>("rstd", M), 0.5f, 1.5f);
  a.overwrite_dinp = a.overwrite_dweight = a.overwrite_dbias = true;
  return a;
}

template <class V>
std::vector<float> host(const V& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  std::vector<float> out(h.span());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = llmk::to_float(h.data()[i]);
  return out;
}

double rel_l2(const std::vector<float>& a, const std::vector<float>& b) {
  double d = 0, n = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    d += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    n += double(b[i]) * b[i];
  }
  return std::sqrt(d / n);
}

struct Ctx {
  cudaStream_t stream;
  char* flush;
  std::size_t flush_bytes = 512u << 20;
};

template <class T, class Tuning>
void row(const char* name, const Ctx& ctx, const Args<T>& a, const std::vector<float> (&ref)[3],
         double copy_us) {
  using Kernel = llmk::kernels::LayernormBlocked<Space, Args<T>, Tuning>;
  const index_t M = a.dout.extent(0), C = a.dout.extent(1);
  Kokkos::View<float*, Space> partials(
      "partials", llmk::kernels::layernorm_blocked_workspace<Space, Tuning>(M, C, true));
  const Space exec(ctx.stream);
  const Kernel kernel(a, partials.data());
  const auto blocks = llmk::kernels::layernorm_plan<Space, Tuning>(M).blocks;
  const float whole = llmk_dev::time_median_us(ctx.stream, ctx.flush, ctx.flush_bytes, true, 20,
                                               [&] { kernel.run(exec); });
  const float main_only = llmk_dev::time_median_us(
      ctx.stream, ctx.flush, ctx.flush_bytes, true, 20, [&] {
        Kokkos::parallel_for("bench_main",
                             typename Kernel::Policy(exec, blocks, Tuning::team_size,
                                                     Tuning::vector_length),
                             kernel);
      });
  kernel.run(exec);
  exec.fence();
  const double e = std::max({rel_l2(host(a.dinp), ref[0]), rel_l2(host(a.dweight), ref[1]),
                             rel_l2(host(a.dbias), ref[2])});
  std::printf("  %-34s %8.1f us (main %6.1f, reduce %5.1f)  %5.1f %% of copy   err %.1e\n", name,
              whole, main_only, whole - main_only, 100.0 * copy_us / whole, e);
}

template <class T>
void shape(const Ctx& ctx, index_t C) {
  const index_t M = 8 * 1024;
  Args<T> a = make_args<T>(M, C);
  const Space exec(ctx.stream);
  llmk::kernels::layernorm_rows_naive(exec, a);
  llmk::kernels::layernorm_columns_naive(exec, a);
  exec.fence();
  const std::vector<float> ref[3] = {host(a.dinp), host(a.dweight), host(a.dbias)};
  // Bytes moved (dinp overwritten): dout, inp read, dinp written, the rest small.
  const double bytes = 3.0 * M * C * sizeof(T) + 2.0 * M * 4 + C * (sizeof(T) + 16);
  char *src, *dst;
  llmk_dev::check(cudaMalloc(&src, std::size_t(bytes / 2) + 64), "malloc");
  llmk_dev::check(cudaMalloc(&dst, std::size_t(bytes / 2) + 64), "malloc");
  const float copy_us = llmk_dev::time_median_us(ctx.stream, ctx.flush, ctx.flush_bytes, true, 20, [&] {
    llmk_dev::check(cudaMemcpyAsync(dst, src, std::size_t(bytes / 2), cudaMemcpyDeviceToDevice, ctx.stream), "copy");
  });
  std::printf("C = %ld, %s, dinp overwritten: %.1f MB, copy %.1f us (%.0f GB/s)\n", long(C),
              sizeof(T) == 4 ? "fp32" : "bf16", bytes / 1e6, copy_us, bytes / copy_us / 1e3);
  row<T, Base>("shipped", ctx, a, ref, copy_us);
  row<T, Tune<8, 16, 8, 1>>("8 warps, 16 rows, sub 8, vec 1", ctx, a, ref, copy_us);
  row<T, Tune<8, 16, 8, 2>>("8 warps, 16 rows, sub 8, vec 2", ctx, a, ref, copy_us);
  row<T, Tune<8, 16, 4, 4>>("8 warps, 16 rows, sub 4, vec 4", ctx, a, ref, copy_us);
  row<T, Tune<8, 8, 8, 4>>("8 warps, 8 rows, sub 8, vec 4", ctx, a, ref, copy_us);
  row<T, Tune<8, 32, 8, 4>>("8 warps, 32 rows, sub 8, vec 4", ctx, a, ref, copy_us);
  row<T, Tune<4, 8, 4, 4>>("4 warps, 8 rows, sub 4, vec 4", ctx, a, ref, copy_us);
  row<T, Tune<16, 32, 16, 4>>("16 warps, 32 rows, sub 16, vec 4", ctx, a, ref, copy_us);
  cudaFree(src);
  cudaFree(dst);
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  Ctx ctx;
  llmk_dev::check(cudaStreamCreate(&ctx.stream), "stream");
  llmk_dev::check(cudaMalloc(&ctx.flush, ctx.flush_bytes), "flush");
  for (index_t C : {768, 1600}) {
    shape<float>(ctx, C);
    shape<llmk::bf16>(ctx, C);
  }
  cudaFree(ctx.flush);
  cudaStreamDestroy(ctx.stream);
}
