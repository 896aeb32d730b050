// Work split over std::threads for the reference libraries (llmk_reference):
// pure speed, no effect on results (each item is computed by the same
// operations in the same order whatever the split). Plain C++17.
#pragma once

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace llmk::reference {

// f(first, last) over [0, n) on `threads` std::threads (0: one per hardware
// thread), each taking a contiguous range.
template <class F>
void parallel_ranges(std::int64_t n, int threads, const F& f) {
  if (threads <= 0) threads = int(std::max(1u, std::thread::hardware_concurrency()));
  const std::int64_t workers = std::min<std::int64_t>(threads, n);
  if (workers <= 1) {
    if (n > 0) f(std::int64_t(0), n);
    return;
  }
  std::vector<std::thread> pool;
  for (std::int64_t w = 0; w < workers; ++w)
    pool.emplace_back([&f, n, w, workers] { f(n * w / workers, n * (w + 1) / workers); });
  for (std::thread& t : pool) t.join();
}

}  // namespace llmk::reference
