// A float array of billions of elements in an execution space's memory, all
// zero at first, for the tests of sizes past 2³¹ elements: on a host space a
// sparse mapping (support/sparse.hpp: untouched pages read as zero and cost
// nothing), on a device an allocation, zero-filled.
#pragma once

#include "support/guarded_array.hpp"
#include "support/sparse.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <vector>

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

}  // namespace llmk_test
