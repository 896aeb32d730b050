// A float array of billions of elements in an execution space's memory, all
// zero at first, for the tests of sizes past 2³¹ elements (each operation's
// test_*_huge.cpp): on a host space a sparse mapping (support/sparse.hpp:
// untouched pages read as zero and cost nothing), on a device an allocation,
// zero-filled; and what those tests share: small integers whose sums are
// exact, the exact comparison, whether the machine has the memory, the checks
// after the call.
#pragma once

#include "support/guarded_array.hpp"
#include "support/sparse.hpp"

#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#ifdef KOKKOS_ENABLE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace llmk_test {

template <class Space>
class HugeArray {
 public:
  explicit HugeArray(std::int64_t n)
      : n_(n), buffer_(is_host_space<Space> ? std::size_t(n) * sizeof(float) : 0) {
    if constexpr (is_host_space<Space>)
      buffer_.advise_huge_pages();
    else
      view_ = View("huge", std::size_t(n));
  }

  bool ok() const { return is_host_space<Space> ? buffer_.ok() : view_.data() != nullptr; }
  float* data() const { return is_host_space<Space> ? buffer_.floats() : view_.data(); }

  void write(std::int64_t offset, const std::vector<float>& v) const {
    Kokkos::deep_copy(Kokkos::subview(unmanaged(), std::make_pair(offset, offset + std::int64_t(v.size()))),
                      HostView(const_cast<float*>(v.data()), v.size()));
  }
  std::vector<float> read(std::int64_t offset, std::int64_t count) const {
    std::vector<float> v(std::size_t(count), 0.0f);
    Kokkos::deep_copy(HostView(v.data(), v.size()),
                      Kokkos::subview(unmanaged(), std::make_pair(offset, offset + count)));
    return v;
  }
  // Fraction of the array in memory (host), 1 on a device.
  double resident_fraction() const {
    if constexpr (!is_host_space<Space>) return 1.0;
    const double page = double(sysconf(_SC_PAGESIZE));
    return double(buffer_.resident_pages()) * page / double(buffer_.bytes());
  }

 private:
  using View = Kokkos::View<float*, Kokkos::LayoutRight, typename Space::memory_space>;
  using Unmanaged = Kokkos::View<float*, Kokkos::LayoutRight, typename Space::memory_space,
                                 Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using HostView =
      Kokkos::View<float*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Unmanaged unmanaged() const { return Unmanaged(data(), std::size_t(n_)); }

  std::int64_t n_;
  SparseBuffer buffer_;
  View view_;
};

// n small non-zero integers in [-max_abs, max_abs] (from `seed`): sums and
// products of a few hundred of them are exact in float32, in any order.
inline std::vector<float> small_integers(std::size_t n, std::uint32_t seed, int max_abs) {
  std::mt19937 rng(seed);
  std::vector<float> v(n);
  for (float& x : v) {
    const int k = int(rng() % std::uint32_t(2 * max_abs)) - max_abs;  // [-max, max)
    x = float(k >= 0 ? k + 1 : k);                                    // never 0
  }
  return v;
}

// Every element of `out` (elements first, first + 1, ... of an output) equal
// to the float64 reference: exact sums of small integers.
inline ::testing::AssertionResult equal_exactly(const char* what, const std::vector<float>& out,
                                                const std::vector<double>& expected,
                                                std::int64_t first) {
  if (out.size() != expected.size())
    return ::testing::AssertionFailure() << what << ": " << out.size() << " elements, "
                                         << expected.size() << " expected";
  for (std::size_t i = 0; i < out.size(); ++i)
    if (double(out[i]) != expected[i])
      return ::testing::AssertionFailure() << what << " element " << first + std::int64_t(i)
                                           << " is " << out[i] << ", expected " << expected[i];
  return ::testing::AssertionSuccess();
}

// Whether Space has the memory a huge test needs: `host_bytes` of the host's
// MemAvailable (its sparse arrays' written pages and everything else), or
// `device_bytes` of free device memory; `why` says how much there is.
template <class Space>
bool enough_memory(double host_bytes, double device_bytes, std::string& why) {
  if constexpr (!is_host_space<Space>) {
    std::size_t free_bytes = 0, total = 0;
#ifdef KOKKOS_ENABLE_CUDA
    cudaMemGetInfo(&free_bytes, &total);
#endif
    (void)total;
    why = "needs " + std::to_string(device_bytes / 1e9) + " GB of device memory, " +
          std::to_string(double(free_bytes) / 1e9) + " GB free";
    return double(free_bytes) >= device_bytes;
  } else {
    const double available = double(mem_available_bytes());
    why = "needs about " + std::to_string(host_bytes / 1e9) +
          " GB of available memory, /proc/meminfo says " + std::to_string(available / 1e9) + " GB";
    return available >= host_bytes;
  }
}

// weight, dweight and dbias of a huge test: small arrays of small integers
// (weight's from seed 1, dweight's initial values 2, dbias's 3) between
// guards, and the float64 reference of dweight and dbias, which starts from
// the initial values; each block of rows adds its part.
template <class Space>
struct SmallArrays {
  SmallArrays(std::int64_t weight_elements, std::int64_t bias_elements)
      : weight(small_integers(std::size_t(weight_elements), 1, 4)),
        dweight0(small_integers(std::size_t(weight_elements), 2, 8)),
        dbias0(small_integers(std::size_t(bias_elements), 3, 8)),
        g_weight("weight", weight, Alignment::Allocation),
        g_dweight("dweight", dweight0, Alignment::Allocation),
        g_dbias("dbias", dbias0, Alignment::Element),
        ref_dweight(dweight0.begin(), dweight0.end()),
        ref_dbias(dbias0.begin(), dbias0.end()) {}

  // After the call: weight bitwise as it was, dweight and dbias exactly
  // their references.
  void expect_results(const Space& exec) const {
    std::vector<float> dweight, dbias, weight_after;
    ASSERT_TRUE(g_dweight.download("dweight", dweight, exec));
    ASSERT_TRUE(g_dbias.download("dbias", dbias, exec));
    ASSERT_TRUE(g_weight.download("weight", weight_after, exec));
    EXPECT_TRUE(bitwise_equal("input weight", weight_after, weight));
    EXPECT_TRUE(equal_exactly("dweight", dweight, ref_dweight, 0));
    EXPECT_TRUE(equal_exactly("dbias", dbias, ref_dbias, 0));
  }

  std::vector<float> weight, dweight0, dbias0;
  GuardedArray<Space> g_weight, g_dweight, g_dbias;
  std::vector<double> ref_dweight, ref_dbias;
};

// After the call, of dinp (rows of C elements): a zero row between the
// blocks, `zero_row`, still 0; on a host every page written (every row was
// visited, dinp += 0 included).
template <class Space>
void expect_dinp_rows_visited(const HugeArray<Space>& dinp, std::int64_t zero_row, std::int64_t C) {
  EXPECT_TRUE(equal_exactly("dinp", dinp.read(zero_row * C, C),
                            std::vector<double>(std::size_t(C), 0.0), zero_row * C))
      << "a zero row";
  if (is_host_space<Space>)
    EXPECT_GT(dinp.resident_fraction(), 0.999) << "rows of dinp were not written";
}

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace llmk_test
