// Timing for the development benchmarks of perf/dev (CUDA only, compiled by
// their scripts): CUDA error checks and the median of a timed region between
// two events, the L2 flushed before each.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace llmk_dev {

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

__global__ inline void spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

// Median µs over `reps` of f() between two events, L2 flushed before each;
// with `hide`, a ~100 µs busy kernel is queued first so the host's launch
// work overlaps it and only the GPU's time is counted.
template <class F>
float time_median_us(cudaStream_t s, char* flush, size_t flush_bytes, bool hide, int reps, F&& f) {
  cudaEvent_t a, b;
  check(cudaEventCreate(&a), "event");
  check(cudaEventCreate(&b), "event");
  std::vector<float> t;
  for (int i = 0; i < reps + 2; ++i) {
    check(cudaMemsetAsync(flush, i, flush_bytes, s), "flush");
    if (hide) spin<<<1, 1, 0, s>>>(200000);  // ~100 µs at ~2 GHz
    check(cudaEventRecord(a, s), "record");
    f();
    check(cudaEventRecord(b, s), "record");
    check(cudaEventSynchronize(b), "sync");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, a, b), "elapsed");
    if (i >= 2) t.push_back(ms * 1000);
  }
  std::sort(t.begin(), t.end());
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return t[t.size() / 2];
}

}  // namespace llmk_dev
