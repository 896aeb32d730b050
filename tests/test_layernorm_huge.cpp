// layernorm_backward past 2³¹ elements (CTest label `huge`, with its
// backend's; RUN_SERIAL; test_matmul_huge.cpp is matmul_backward's):
//  - "elements": C = 1024, M = 2²¹ + 2¹² rows, M·C = 2³¹ + 2²² elements: row
//    2²¹ starts at element 2³¹ (where an int element index m·C wraps);
//  - "rows": C = 1, M = 2³¹ + 2²⁰ rows (where an int row index wraps, and
//    Kokkos 3's int league sizes end).
// Each implementation (not "auto", one of them), fp32, through the raw-pointer
// entry. The rows are zero (mean 0, rstd 0: gradient 0) except blocks of 96
// rows at the start, around the boundary and at the end, of small integers:
// every float32 operation of the backward is then exact (with C a power of
// two 1/C is too), so the non-zero rows of dinp, and dweight and dbias, must
// equal the float64 reference exactly; a zero row between the blocks stays 0.
//
// On a host space dout, inp, mean and rstd are sparse mappings that are only
// read (their untouched pages are the zero page); dinp is written everywhere
// (+= 0), 8.6 GB resident either way: skipped with a message below 12 GB of
// MemAvailable. On Cuda everything is allocated: ~26 GB of device memory.
#include "contract/device_problem.hpp"
#include "support/huge_array.hpp"
#include "support/layernorm_backward_adapter.hpp"
#include "support/test_space.hpp"

#include <llmk/layernorm_backward.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using namespace llmk_test;
namespace ln = llmk::reference::layernorm;
using Space = llmk_test::TestSpace;

constexpr std::int64_t kBlockRows = 96;  // non-zero rows per block

struct HugeCase {
  std::string name;
  std::int64_t M, C;
  std::int64_t boundary_row;  // the row where an index past 2³¹ begins
};

const HugeCase kCases[] = {
    {"elements", (std::int64_t(1) << 21) + (std::int64_t(1) << 12), 1024, std::int64_t(1) << 21},
    {"rows", (std::int64_t(1) << 31) + (std::int64_t(1) << 20), 1, std::int64_t(1) << 31},
};

// The default host space (OpenMP where Kokkos has it) and Cuda; Serial only
// where it is the default host space.
constexpr bool runs_here() {
  return std::is_same_v<Space, Kokkos::DefaultHostExecutionSpace> || !is_host_space<Space>;
}

// Host: dinp (M·C·4 bytes) and room for everything else; a device: all of it.
bool has_memory_for(const HugeCase& c, std::string& why) {
  return enough_memory<Space>(double(c.M * c.C) * 4 + 3e9,
                              double(c.M) * double(3 * c.C + 2) * 4 + 2e9, why);
}

void check_huge(const std::string& impl, const HugeCase& hc) {
  std::string why;
  if (!has_memory_for(hc, why)) GTEST_SKIP() << hc.name << ": " << why;
  const auto t_start = std::chrono::steady_clock::now();
  const std::int64_t M = hc.M, C = hc.C;
  const HugeArray<Space> dout(M * C), inp(M * C), dinp(M * C), mean(M), rstd(M);
  ASSERT_TRUE(dout.ok() && inp.ok() && dinp.ok() && mean.ok() && rstd.ok())
      << "cannot map the arrays";
  const std::int64_t blocks[] = {0, hc.boundary_row - kBlockRows / 2, M - kBlockRows};

  SmallArrays<Space> w(C, C);  // weight, dweight, dbias

  // Each block a small problem of its own: its dinp, and its part of dweight
  // and dbias, from the float64 reference.
  std::vector<std::vector<double>> ref_dinp;
  for (std::size_t b = 0; b < std::size(blocks); ++b) {
    ln::HostProblem p;
    p.shape = {"block", 1, kBlockRows, C};
    const std::size_t n = std::size_t(kBlockRows * C);
    const std::uint32_t seed = 10 * std::uint32_t(b + 1);
    p.dout = small_integers(n, seed, 4);
    p.inp = small_integers(n, seed + 1, 4);
    p.dinp = small_integers(n, seed + 2, 8);
    p.mean = small_integers(std::size_t(kBlockRows), seed + 3, 2);
    p.rstd = small_integers(std::size_t(kBlockRows), seed + 4, 2);  // 1 or 2: exact scalings
    for (float& r : p.rstd) r = std::abs(r);
    p.weight = w.weight;
    p.dweight.assign(std::size_t(C), 0.0f);
    p.dbias.assign(std::size_t(C), 0.0f);
    const ln::Gradients64 g = ln::reference_backward(p);
    for (std::int64_t c = 0; c < C; ++c) {
      w.ref_dweight[std::size_t(c)] += g.dweight[std::size_t(c)];
      w.ref_dbias[std::size_t(c)] += g.dbias[std::size_t(c)];
    }
    ref_dinp.push_back(g.dinp);
    dout.write(blocks[b] * C, p.dout);
    inp.write(blocks[b] * C, p.inp);
    dinp.write(blocks[b] * C, p.dinp);
    mean.write(blocks[b], p.mean);
    rstd.write(blocks[b], p.rstd);
  }
  std::printf("setup: %.1f s\n", seconds_since(t_start));

  const Space exec;
  llmk::LayernormBackwardOptions options;
  options.impl = impl;
  auto t0 = std::chrono::steady_clock::now();
  llmk::layernorm_backward(exec, dinp.data(), w.g_dweight.data(), w.g_dbias.data(), dout.data(),
                           inp.data(), w.g_weight.data(), mean.data(), rstd.data(), 1, M, C,
                           options);
  exec.fence();
  std::printf("%s on %s, M = %lld, C = %lld: %.1f s; dinp %.0f%% resident\n", impl.c_str(),
              Space::name(), static_cast<long long>(M), static_cast<long long>(C),
              seconds_since(t0), 100 * dinp.resident_fraction());

  for (std::size_t b = 0; b < std::size(blocks); ++b)
    EXPECT_TRUE(equal_exactly("dinp", dinp.read(blocks[b] * C, kBlockRows * C), ref_dinp[b],
                              blocks[b] * C))
        << "block at row " << blocks[b];
  expect_dinp_rows_visited(dinp, hc.boundary_row / 2, C);
  w.expect_results(exec);
  std::printf("total: %.1f s\n", seconds_since(t_start));
}

// (if constexpr: on a space where it does not run, nvcc warns of an
// unreachable loop.)
[[maybe_unused]] const bool registered = [] {
  if constexpr (runs_here()) {
    for (const std::string& impl :
         impls_under_test(LayernormBackwardContract::catalog<Space>())) {
      if (impl == "auto") continue;
      for (const HugeCase& hc : kCases)
        contract::add_test("layernorm_backward", "HugeRows", impl + "_" + hc.name,
                           "M = " + std::to_string(hc.M) + ", C = " + std::to_string(hc.C),
                           [=] { check_huge(impl, hc); });
    }
  }
  return true;
}();

}  // namespace
