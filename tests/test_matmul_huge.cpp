// matmul_backward at M ≥ 2³¹ rows (CTest label `huge`, with its backend's;
// RUN_SERIAL; test_layernorm_huge.cpp is layernorm_backward's): every
// implementation on a problem of M = 2³¹ + 2²⁰ rows, C = 1, OC = 2, whose rows
// are zero except a few blocks: around row 0, around 2³⁰ and 2³¹ − 1 / 2³¹
// (where a 32-bit row index wraps, and where llmk cuts the rows into chunks
// for the implementations whose libraries count rows in int), and the last rows.
//
// On a host space the arrays are sparse mappings (support/huge_array.hpp):
// the inputs' untouched pages read as zero and cost nothing; dinp is written
// everywhere (+= 0), so it costs M·C·4 bytes ≈ 8.6 GB of memory, given back
// after each test (each CTest test is its own process). On Cuda the arrays
// are device allocations (≈ 34 GB), zero-filled.
//
// The values are small integers, so every float32 sum is exact in any order:
// the non-zero rows of dinp, dweight and dbias must equal the float64
// reference over the non-zero rows exactly.
#include "contract/device_problem.hpp"
#include "support/huge_array.hpp"
#include "support/matmul_backward_adapter.hpp"
#include "support/test_space.hpp"

#include <llmk/matmul_backward.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <string>
#include <vector>

namespace {

using namespace llmk_test;
using Space = llmk_test::TestSpace;

constexpr std::int64_t k2to31 = std::int64_t(1) << 31;
constexpr std::int64_t kM = k2to31 + (std::int64_t(1) << 20), kC = 1, kOC = 2;
constexpr std::int64_t kBlockRows = 96;  // non-zero rows per block

// First rows of the non-zero blocks: each spans a boundary (a 32-bit row
// index wraps at 2³¹; llmk cuts the rows into chunks at multiples of an
// implementation's max_rows: 2³⁰ for team, 2³¹ − 1 for tiled, kokkoskernels)
// or ends the rows.
const std::int64_t kBlocks[] = {0, k2to31 / 2 - kBlockRows / 2, k2to31 - 1 - kBlockRows / 2,
                                kM - kBlockRows};

// The spaces that run it: the default host space (OpenMP where Kokkos has it)
// and Cuda; Serial only where it is the default host space.
constexpr bool runs_here() {
  return std::is_same_v<Space, Kokkos::DefaultHostExecutionSpace> || !is_host_space<Space>;
}

void check_huge_rows(const std::string& impl) {
  // tiled's cost is per tile, not per element: with C = 1 and OC = 2 each
  // 128-row tile of dinp stages and multiplies a whole 128 × 768 × 128 block
  // on a host, and dweight (2 × 1: one tile) walks all 2³¹ rows. On 2 cores
  // (Zen 3) that took 37 minutes (naive 24 s, team 51 s, kokkoskernels 23 s)
  // before the host's split-K, which splits such a product over the threads
  // only (two ranges on 2 cores), so on a host it runs only on request. On a
  // GPU split-K splits dweight's rows into 16 ranges (issue 10): 20.3 s on an
  // H200 (over 5 minutes with one team before).
  if (impl == "tiled" && is_host_space<Space> && !std::getenv("LLMK_TEST_SLOW"))
    GTEST_SKIP() << "tiled at M = 2^31 with C = 1, OC = 2 took ~37 minutes on 2 cores (before "
                    "the host's split-K over threads; not measured since); set LLMK_TEST_SLOW=1 "
                    "to run it";
  // Host: dinp (M·C·4 = 8.6 GB) and room for everything else; a device: all.
  std::string why;
  if (!enough_memory<Space>(12e9, double(kM) * double(2 * kC + kOC) * 4 + 2e9, why))
    GTEST_SKIP() << "M = 2^31 + 2^20 rows: " << why;
  const auto t_start = std::chrono::steady_clock::now();

  const HugeArray<Space> dout(kM * kOC), inp(kM * kC), dinp(kM * kC);
  ASSERT_TRUE(dout.ok() && inp.ok() && dinp.ok()) << "cannot map the arrays";
  SmallArrays<Space> w(kOC * kC, kOC);  // weight, dweight, dbias

  // The non-zero rows, and the float64 reference over them (dweight, dbias
  // accumulate over all blocks; each block's dinp rows on their own).
  std::vector<std::vector<double>> ref_dinp;
  for (std::size_t b = 0; b < std::size(kBlocks); ++b) {
    const std::uint32_t k = std::uint32_t(b);
    const std::vector<float> d = small_integers(kBlockRows * kOC, 10 + k, 4),
                             x = small_integers(kBlockRows * kC, 20 + k, 4),
                             g = small_integers(kBlockRows * kC, 30 + k, 8);
    std::vector<double> rd(g.begin(), g.end());
    llmk::reference::accumulate_backward(d.data(), x.data(), w.weight.data(), kBlockRows, kC, kOC,
                                         rd.data(), w.ref_dweight.data(), w.ref_dbias.data(),
                                         llmk::reference::Method::Loops);
    ref_dinp.push_back(rd);
    dout.write(kBlocks[b] * kOC, d);
    inp.write(kBlocks[b] * kC, x);
    dinp.write(kBlocks[b] * kC, g);
  }
  std::printf("setup: %.1f s\n", seconds_since(t_start));

  const Space exec;
  llmk::MatmulBackwardOptions options;
  options.impl = impl;
  const auto t0 = std::chrono::steady_clock::now();
  llmk::matmul_backward(exec, dinp.data(), w.g_dweight.data(), w.g_dbias.data(), dout.data(),
                        inp.data(), w.g_weight.data(), 1, kM, kC, kOC, options);
  exec.fence();
  std::printf("%s on %s, M = %lld: %.1f s; dinp %.0f%% resident\n", impl.c_str(), Space::name(),
              static_cast<long long>(kM), seconds_since(t0), 100 * dinp.resident_fraction());

  for (std::size_t b = 0; b < std::size(kBlocks); ++b)
    EXPECT_TRUE(equal_exactly("dinp", dinp.read(kBlocks[b] * kC, kBlockRows * kC), ref_dinp[b],
                              kBlocks[b] * kC))
        << "block at row " << kBlocks[b];
  expect_dinp_rows_visited(dinp, k2to31 / 4, kC);
  w.expect_results(exec);
  std::printf("total: %.1f s\n", seconds_since(t_start));
}

// (if constexpr: on a space where it does not run, nvcc warns of an
// unreachable loop.)
[[maybe_unused]] const bool registered = [] {
  if constexpr (runs_here()) {
    for (const std::string& impl : impls_under_test(MatmulBackwardContract::catalog<Space>())) {
      if (impl == "auto") continue;  // one of the others
      contract::add_test("matmul_backward", "HugeRows", impl,
                         "M = " + std::to_string(kM) + ", C = 1, OC = 2",
                         [=] { check_huge_rows(impl); });
    }
  }
  return true;
}();

}  // namespace
