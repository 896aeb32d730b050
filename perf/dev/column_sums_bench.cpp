// Development benchmark of kernels/column_sums.hpp on a CUDA GPU: the bias
// pass (Σ_rows of an M × OC matrix) in several tunings, against a device copy,
// with and without the host's launch latency hidden behind a busy kernel.
// Not part of the build: perf/dev/column_sums_bench.sh compiles and runs it
// (the H200 measurements in docs/performance.md came from it).
#include <kernels/column_sums.hpp>

#include "dev_timing.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

using Space = Kokkos::Cuda;
using llmk::index_t;

template <int TeamSize, int LaneBytes, int RowsPerThread>
struct Tune {
  static constexpr int team_size = TeamSize, lanes = 32, lane_bytes = LaneBytes;
  template <class T>
  static constexpr int rows_per_thread = RowsPerThread;
  static constexpr bool pack_loads = true;
};

using llmk_dev::check;

// Median µs (dev_timing.hpp).
template <class F>
float time_median(cudaStream_t s, char* flush, size_t flush_bytes, bool hide, int reps, F&& f) {
  return llmk_dev::time_median_us(s, flush, flush_bytes, hide, reps, f);
}

template <class TIn, class Tuning>
void bench(const char* name, index_t M, index_t OC, cudaStream_t s, char* flush, size_t fb) {
  using llmk::index_t;
  using CS = llmk::kernels::ColumnSums<Space, float, TIn, Tuning>;
  Kokkos::View<TIn**, Kokkos::LayoutRight, Space> dout("dout", M, OC);
  Kokkos::View<float*, Space> dbias("dbias", OC);
  Kokkos::View<float*, Space> partial("partial", CS::workspace_floats(M, OC));
  // Values: i % 7 - 3 (exact small integers, so the sums are exact and checkable).
  Kokkos::parallel_for(
      "fill", Kokkos::RangePolicy<Space, Kokkos::IndexType<index_t>>(0, M * OC),
      KOKKOS_LAMBDA(const index_t i) { dout.data()[i] = TIn(float(i % 7 - 3)); });
  Space exec;
  const CS cs(dbias, dout, partial.data(), true);
  const int reps = 30;
  const float cold = time_median(s, flush, fb, false, reps, [&] { cs.run(exec); });
  const float hidden = time_median(s, flush, fb, true, reps, [&] { cs.run(exec); });
  const float p1 = time_median(s, flush, fb, true, reps, [&] { cs.run_partial(exec); });
  const float p2 = time_median(s, flush, fb, true, reps, [&] { cs.run_final(exec); });
  // Check against the exact integer sums.
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dbias);
  long long bad = 0;
  for (index_t c = 0; c < OC; ++c) {
    long long sum = 0;
    for (index_t m = 0; m < M; ++m) sum += (m * OC + c) % 7 - 3;
    if (h(c) != float(sum)) ++bad;
  }
  const double bytes = double(M) * OC * sizeof(TIn);
  std::printf("%-30s OC=%6lld cold %6.1f us hidden %6.1f us %5.0f GB/s (pass 1 %6.1f, pass 2 %5.1f) %s\n",
              name, (long long)OC, cold, hidden, bytes / hidden / 1e3, p1, p2,
              bad ? "WRONG" : "ok");
}

void copy_bench(index_t bytes, cudaStream_t s, char* flush, size_t fb) {
  char *src, *dst;
  check(cudaMalloc(&src, bytes), "malloc");
  check(cudaMalloc(&dst, bytes), "malloc");
  const float t = time_median(s, flush, fb, true, 30, [&] {
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s), "copy");
  });
  std::printf("device copy %.0f MB: %.1f us, %.0f GB/s (read + write)\n", bytes / 1e6, t,
              2.0 * bytes / t / 1e3);
  cudaFree(src);
  cudaFree(dst);
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::initialize(argc, argv);
  {
    const cudaStream_t s = Space().cuda_stream();
    const size_t fb = size_t(256) << 20;
    char* flush;
    check(cudaMalloc(&flush, fb), "malloc");
    for (const llmk::index_t OC : {llmk::index_t(3072), llmk::index_t(50304)}) {
      const llmk::index_t M = 8192;
      copy_bench(M * OC * 4, s, flush, fb);
      bench<float, Tune<8, 16, 128>>("f32  8 warps 16 B 128 rows", M, OC, s, flush, fb);
      bench<float, Tune<8, 16, 64>>("f32  8 warps 16 B 64 rows", M, OC, s, flush, fb);
      bench<float, Tune<16, 16, 32>>("f32 16 warps 16 B 32 rows", M, OC, s, flush, fb);
      bench<float, Tune<16, 16, 64>>("f32 16 warps 16 B 64 rows", M, OC, s, flush, fb);
      bench<float, Tune<8, 16, 32>>("f32  8 warps 16 B 32 rows", M, OC, s, flush, fb);
      bench<float, Tune<8, 16, 16>>("f32  8 warps 16 B 16 rows", M, OC, s, flush, fb);
      bench<float, Tune<4, 16, 32>>("f32  4 warps 16 B 32 rows", M, OC, s, flush, fb);
      bench<float, Tune<16, 16, 16>>("f32 16 warps 16 B 16 rows", M, OC, s, flush, fb);
      bench<float, Tune<8, 32, 32>>("f32  8 warps 32 B 32 rows", M, OC, s, flush, fb);
      bench<llmk::bf16, Tune<8, 8, 128>>("bf16 8 warps 8 B 128 rows", M, OC, s, flush, fb);
      bench<llmk::bf16, Tune<16, 8, 32>>("bf16 16 warps 8 B 32 rows", M, OC, s, flush, fb);
      bench<llmk::bf16, Tune<8, 16, 64>>("bf16 8 warps 16 B 64 rows", M, OC, s, flush, fb);
      bench<llmk::bf16, Tune<8, 16, 32>>("bf16 8 warps 16 B 32 rows", M, OC, s, flush, fb);
      bench<llmk::bf16, Tune<8, 8, 32>>("bf16 8 warps 8 B 32 rows", M, OC, s, flush, fb);
      bench<llmk::bf16, Tune<8, 8, 64>>("bf16 8 warps 8 B 64 rows", M, OC, s, flush, fb);

    }
    cudaFree(flush);
  }
  Kokkos::finalize();
}
