// A device array placed off its allocation's alignment, for the elementwise
// operations' own cases (test_gelu_cases.cpp, test_residual_forward.cpp):
// the packed kernels' heads, tails and misaligned fallbacks.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <vector>

namespace llmk_test {

// A device array of `n` elements of T starting `offset` elements past a
// 256-byte aligned allocation, the elements around it holding `fill`.
template <class T, class Space>
struct OffsetArray {
  static constexpr int kPad = 16;
  Kokkos::View<T*, Space> storage;
  int offset;
  std::int64_t n;

  OffsetArray(const std::vector<float>& values, int offset_, float fill)
      : storage("offset_array", values.size() + 2 * kPad), offset(offset_), n(values.size()) {
    auto host = Kokkos::create_mirror_view(storage);
    for (std::size_t i = 0; i < host.extent(0); ++i) host(i) = T(fill);
    for (std::size_t i = 0; i < values.size(); ++i) host(offset + i) = T(values[i]);
    Kokkos::deep_copy(storage, host);
  }
  T* data() const { return storage.data() + offset; }
  // Every element of the storage, as float.
  std::vector<float> all() const {
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), storage);
    std::vector<float> v(host.extent(0));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = float(host(i));
    return v;
  }
  std::vector<float> range() const {
    const std::vector<float> v = all();
    return {v.begin() + offset, v.begin() + offset + n};
  }
};

}  // namespace llmk_test
