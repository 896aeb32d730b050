// Development benchmark of the layer-norm backward's GPU kernels
// (ops/layernorm_backward/rows.hpp's rows in registers, ops/layernorm_backward/kernels.hpp's
// blocked kernel): tunings side by side at GPT-2's shapes (B = 8, T = 1024,
// C = 768 and 1600) in fp32 and bf16, dinp overwritten and accumulated, the
// whole call and its main kernel alone, against a device copy of the bytes
// the call moves; each tuning's outputs compared with the naive kernels'.
// Not part of the build: perf/dev/layernorm_bench.sh compiles it
// (docs/performance.md has what it measured on an H200).
#include <ops/layernorm_backward/rows.hpp>

#include "dev_timing.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

namespace {

using Space = Kokkos::Cuda;
using llmk::index_t;
using Base = llmk::kernels::LayernormTuning<Space>;

// The blocked kernel's tunings.
template <int TeamSize, int RowsPerBlock, int SubRows, int Vec>
struct Blocked : Base {
  static constexpr int team_size = TeamSize;
  static constexpr int rows_per_block = RowsPerBlock;
  static constexpr int sub_rows = SubRows;
  static constexpr int vec = Vec;
};

// The rows kernel's: warps a team, rows a block, packs a lane at most (0:
// shipped), teams per SM the launch bounds ask for, bytes a pack, rows a
// group holds at once, the second pass's threads per 32 columns.
template <int Warps, int RowsBlock, int Chunks = 0, int MinBlocks = 1, int PackBytes = 16,
          int RowsPerStep = 1, int ReduceThreads = 32>
struct Rows : Base {
  static constexpr int team_size = Warps;
  static constexpr int rows_block = RowsBlock;
  template <class T>
  static constexpr int row_chunks = Chunks > 0 ? Chunks : Base::template row_chunks<T>;
  template <class T>
  static constexpr int rows_pack_bytes = PackBytes;
  template <class T>
  static constexpr int rows_per_step = RowsPerStep;
  using rows_launch_bounds = Kokkos::LaunchBounds<Warps * 32, MinBlocks>;
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

// --only LABEL: only the rows of that label (and one call each, for a
// profiler: `ncu ... layernorm_bench --only "16B x2, 2 teams, 2 rows"`).
const char* g_only = nullptr;

struct Ctx {
  cudaStream_t stream;
  char* flush;
  std::size_t flush_bytes = 512u << 20;
};

// Each output against the naive kernels' on the same inputs (dinp
// overwritten, so that repeated calls leave it the same).
template <class T>
double error(const Args<T>& a, const std::vector<float> (&ref)[3]) {
  return std::max({rel_l2(host(a.dinp), ref[0]), rel_l2(host(a.dweight), ref[1]),
                   rel_l2(host(a.dbias), ref[2])});
}

void print(const char* name, float whole, float main_only, double copy_us, double err) {
  std::printf("  %-40s %7.1f us (main %6.1f, reduce %5.1f)  %5.1f %% of copy   err %.1e\n", name,
              whole, main_only, whole - main_only, 100.0 * copy_us / whole, err);
}

template <class T, class Tuning>
void blocked_row(const char* name, const Ctx& ctx, Args<T> a, const std::vector<float> (&ref)[3],
                 double copy_us, bool overwrite) {
  if (g_only) return;
  using Kernel = llmk::kernels::LayernormBlocked<Space, Args<T>, Tuning>;
  const index_t M = a.dout.extent(0), C = a.dout.extent(1);
  Kokkos::View<float*, Space> partials(
      "partials", llmk::kernels::layernorm_blocked_workspace<Space, Tuning>(M, C, true));
  const Space exec(ctx.stream);
  const auto blocks = llmk::kernels::layernorm_plan<Space, Tuning>(M).blocks;
  a.overwrite_dinp = true;
  Kernel(a, partials.data()).run(exec);
  exec.fence();
  const double err = error(a, ref);
  a.overwrite_dinp = overwrite;
  const Kernel kernel(a, partials.data());
  const float whole = llmk_dev::time_median_us(ctx.stream, ctx.flush, ctx.flush_bytes, true, 20,
                                               [&] { kernel.run(exec); });
  const float main_only = llmk_dev::time_median_us(
      ctx.stream, ctx.flush, ctx.flush_bytes, true, 20, [&] {
        Kokkos::parallel_for("bench_main",
                             typename Kernel::Policy(exec, blocks, Tuning::team_size,
                                                     Tuning::vector_length),
                             kernel);
      });
  print(name, whole, main_only, copy_us, err);
}

// The rows kernel's first kernel alone, for the plan's warps per row.
template <int S, class T, class Tuning>
float time_main_with(const Ctx& ctx, const Args<T>& a, const llmk::kernels::LayernormRowsPlan& plan,
                     float* partials) {
  if constexpr (S <= Tuning::team_size) {
    if (plan.warps_per_row == S) {
      const llmk::kernels::LayernormRows<Space, Args<T>, S, Tuning> k(a, plan.blocks, partials);
      const Space exec(ctx.stream);
      return llmk_dev::time_median_us(ctx.stream, ctx.flush, ctx.flush_bytes, true, 20,
                                      [&] { k.run_rows(exec); });
    }
  }
  return 0;
}
template <class T, class Tuning>
float time_main(const Ctx& ctx, const Args<T>& a, const llmk::kernels::LayernormRowsPlan& plan,
                float* partials) {
  return time_main_with<1, T, Tuning>(ctx, a, plan, partials) +
         time_main_with<2, T, Tuning>(ctx, a, plan, partials) +
         time_main_with<4, T, Tuning>(ctx, a, plan, partials) +
         time_main_with<8, T, Tuning>(ctx, a, plan, partials) +
         time_main_with<16, T, Tuning>(ctx, a, plan, partials);
}

template <class T, class Tuning>
void rows_row(const char* name, const Ctx& ctx, Args<T> a, const std::vector<float> (&ref)[3],
              double copy_us, bool overwrite) {
  const index_t M = a.dout.extent(0), C = a.dout.extent(1);
  if (g_only && std::strcmp(g_only, name) != 0) return;
  const auto plan = llmk::kernels::layernorm_rows_plan<T, Tuning>(M, C);
  if (plan.warps_per_row == 0) {
    std::printf("  %-40s (does not fit)\n", name);
    return;
  }
  Kokkos::View<float*, Space> partials(
      "partials", llmk::kernels::layernorm_rows_workspace<Space, T, Tuning>(M, C, true));
  const Space exec(ctx.stream);
  auto run = [&](const Args<T>& args) {
    llmk::kernels::run_layernorm_rows<Space, Tuning>(exec, args, plan, partials.data());
  };
  a.overwrite_dinp = true;
  run(a);
  exec.fence();
  const double err = error(a, ref);
  a.overwrite_dinp = overwrite;
  if (g_only) {
    run(a);
    exec.fence();
    std::printf("  %s: ran once (err %.1e)\n", name, err);
    return;
  }
  const float whole = llmk_dev::time_median_us(ctx.stream, ctx.flush, ctx.flush_bytes, true, 20,
                                               [&] { run(a); });
  // The main kernel alone (its own launch with the plan's warps per row).
  const float main_only = time_main<T, Tuning>(ctx, a, plan, partials.data());
  char label[96];
  std::snprintf(label, sizeof label, "%s [S %d, %ld blocks]", name, plan.warps_per_row,
                long(plan.blocks.blocks));
  print(label, whole, main_only, copy_us, err);
}

template <class T>
void shape(const Ctx& ctx, index_t C, bool overwrite) {
  const index_t M = 8 * 1024;
  Args<T> a = make_args<T>(M, C);
  const Space exec(ctx.stream);
  llmk::kernels::layernorm_rows_naive(exec, a);
  llmk::kernels::layernorm_columns_naive(exec, a);
  exec.fence();
  const std::vector<float> ref[3] = {host(a.dinp), host(a.dweight), host(a.dbias)};
  // Bytes moved: dout, inp read, dinp written (and read when accumulated),
  // mean and rstd, the C-long vectors.
  const double bytes = (overwrite ? 3.0 : 4.0) * M * C * sizeof(T) + 2.0 * M * 4 +
                       C * (sizeof(T) + 16);
  char *src, *dst;
  llmk_dev::check(cudaMalloc(&src, std::size_t(bytes / 2) + 64), "malloc");
  llmk_dev::check(cudaMalloc(&dst, std::size_t(bytes / 2) + 64), "malloc");
  const float copy_us = llmk_dev::time_median_us(ctx.stream, ctx.flush, ctx.flush_bytes, true, 20, [&] {
    llmk_dev::check(cudaMemcpyAsync(dst, src, std::size_t(bytes / 2), cudaMemcpyDeviceToDevice, ctx.stream), "copy");
  });
  std::printf("C = %ld, %s, dinp %s: %.1f MB, copy %.1f us (%.0f GB/s)\n", long(C),
              sizeof(T) == 4 ? "fp32" : "bf16", overwrite ? "overwritten" : "accumulated",
              bytes / 1e6, copy_us, bytes / copy_us / 1e3);
  blocked_row<T, Base>("blocked (shipped)", ctx, a, ref, copy_us, overwrite);
  // Registers decide the warps an SM holds: a lane keeps ~6 floats of each
  // of its row's elements (dout, norm, weight, dinp's old value, its two
  // column sums), so fewer elements a lane (more warps a row) let 2 teams
  // of 256 threads fit in an SM's 64 K registers (≤ 128 each).
  // The shipped tuning and the alternatives it was chosen over
  // (kernels/tuning.hpp says what each measured).
  rows_row<T, Base>("rows (shipped)", ctx, a, ref, copy_us, overwrite);
  rows_row<T, Rows<8, 32, 2, 2, 16, 2>>("16B x2, 2 rows", ctx, a, ref, copy_us, overwrite);
  rows_row<T, Rows<8, 32, 2, 2>>("16B x2", ctx, a, ref, copy_us, overwrite);
  rows_row<T, Rows<8, 32, 3, 2>>("16B x3", ctx, a, ref, copy_us, overwrite);
  rows_row<T, Rows<8, 32, 4, 2, 8, 2>>("8B x4, 2 rows", ctx, a, ref, copy_us, overwrite);
  rows_row<T, Rows<8, 32, 4, 2, 8>>("8B x4", ctx, a, ref, copy_us, overwrite);
  rows_row<T, Rows<8, 32, 3, 2, 8, 2>>("8B x3, 2 rows", ctx, a, ref, copy_us, overwrite);
  rows_row<T, Rows<8, 32, 2, 2, 8, 3>>("8B x2, 3 rows", ctx, a, ref, copy_us, overwrite);
  rows_row<T, Rows<8, 64, 2, 2, 16, 2>>("16B x2, 2 rows, 64 a block", ctx, a, ref, copy_us,
                                        overwrite);
  rows_row<T, Rows<4, 16, 2, 4, 16, 2>>("16B x2, 2 rows, 4 warps, 16 a block", ctx, a, ref,
                                        copy_us, overwrite);
  rows_row<T, Rows<8, 32, 2, 2, 16, 2, 16>>("16B x2, 2 rows, reduce 16", ctx, a, ref, copy_us,
                                            overwrite);
  cudaFree(src);
  cudaFree(dst);
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--only") == 0) g_only = argv[i + 1];
  Ctx ctx;
  llmk_dev::check(cudaStreamCreate(&ctx.stream), "stream");
  llmk_dev::check(cudaMalloc(&ctx.flush, ctx.flush_bytes), "flush");
  for (index_t C : {768, 1600})
    for (bool overwrite : {false, true}) {
      shape<float>(ctx, C, overwrite);
      shape<llmk::bf16>(ctx, C, overwrite);
    }
  cudaFree(ctx.flush);
  cudaStreamDestroy(ctx.stream);
}
