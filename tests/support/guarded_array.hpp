// Arrays of a test problem in an execution space's memory, each between two
// guard bands of signaling NaN, and the views and pointers through which the
// entry points of any llmk operation see them (tests/contract/ puts every
// operation's problem on top of these).
//
// The API only ever sees the arrays' interiors. An implementation that writes
// outside its outputs changes a guard (download() fails); one that reads
// outside its inputs reads NaN, which reaches its results (they must be finite).
#pragma once

#include "support/compare.hpp"

#include <core/reference/bf16.hpp>
#include <core/reference/precision.hpp>
#include <gtest/gtest.h>
#include <llmk/tensor_ref.hpp>
#include <llmk/types.hpp>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace llmk_test {

template <class Space>
constexpr bool is_host_space =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Space::memory_space>::accessible;

// How the interior is aligned: as Kokkos aligns an allocation (a multiple of
// 128 bytes past it), or only to one element (4 bytes for float, 2 for bf16),
// as a slice of a larger buffer may be (llm.c's tensors are slices of one
// allocation).
enum class Alignment { Allocation, Element };

// The element type of a problem's array in a precision configuration.
inline llmk::DType input_dtype(llmk::reference::Precision precision) {
  return llmk::reference::bf16_inputs(precision) ? llmk::DType::bf16 : llmk::DType::f32;
}
inline llmk::DType output_dtype(llmk::reference::Precision precision,
                                llmk::reference::Output output) {
  return llmk::reference::bf16_output(precision, output) ? llmk::DType::bf16 : llmk::DType::f32;
}

// An array of float or bf16 elements between two guard bands of signaling
// NaN (guard_nan(), or its top half for bf16: 0x7fa5, also a signaling NaN).
// The host side is always float: bf16 elements are converted on upload (by
// the reference's own rounding, exact for the bf16-representable values of a
// bf16 problem) and widened on download. Or an array of int32 elements
// (tokens, targets: int32()), its host side int32, between guard bands of the
// same bytes as a float array's (as int32, 0x7fa5a5a5: no valid index).
template <class Space>
class GuardedArray {
 public:
  // (Allocates: call it on the thread that initialized Kokkos.)
  GuardedArray(const std::string& label, const std::vector<float>& values, Alignment alignment,
               llmk::DType dtype = llmk::DType::f32)
      : GuardedArray(label, std::int64_t(values.size()), alignment, dtype, false) {
    encode(values, host_.data() + guard_ * elem_);
    Kokkos::deep_copy(storage_, host_);
  }
  // An int32 array.
  GuardedArray(const std::string& label, const std::vector<std::int32_t>& values,
               Alignment alignment)
      : GuardedArray(label, std::int64_t(values.size()), alignment, llmk::DType::f32, true) {
    if (size_) std::memcpy(host_.data() + guard_ * elem_, values.data(), std::size_t(size_) * 4);
    Kokkos::deep_copy(storage_, host_);
  }

  // (A float array's element type for an int32 array: use int32().)
  llmk::DType dtype() const { return dtype_; }
  bool int32() const { return int32_; }
  // The interior (non-null even when empty).
  void* raw() const { return storage_.data() + guard_ * elem_; }
  float* data() const {  // a float array's
    if (dtype_ != llmk::DType::f32 || int32_)
      throw std::logic_error("GuardedArray::data() of a bf16 or int32 array");
    return static_cast<float*>(raw());
  }
  llmk::bf16* bf16_data() const {
    if (dtype_ != llmk::DType::bf16) throw std::logic_error("bf16_data() of a float array");
    return static_cast<llmk::bf16*>(raw());
  }
  std::int32_t* int32_data() const {
    if (!int32_) throw std::logic_error("int32_data() of a float or bf16 array");
    return static_cast<std::int32_t*>(raw());
  }
  // The interior as the raw-pointer entry takes it: a float* or llmk::bf16*.
  llmk::BufferRef buffer() const {
    if (dtype_ == llmk::DType::f32) return llmk::BufferRef(data());
    return llmk::BufferRef(bf16_data());
  }
  std::int64_t size() const { return size_; }

  // Overwrites the interior with `values` (as many as the interior holds),
  // enqueued on `exec`. Host spaces copy with memcpy, so that any thread may
  // call it (Kokkos 3's OpenMP deep_copy launches only from one thread).
  void upload(const Space& exec, const std::vector<float>& values) const {
    if (int32_) throw std::logic_error("GuardedArray::upload of floats into an int32 array");
    if (size_ == 0) return;
    // float: the caller's values as they are; bf16: converted (a temporary,
    // so that a device copy is fenced before it goes away).
    std::vector<unsigned char> converted;
    const void* bytes = values.data();
    if (elem_ != 4) {
      converted.resize(std::size_t(size_) * elem_);
      encode(values, converted.data());
      bytes = converted.data();
    }
    const std::size_t n = std::size_t(size_ * elem_);
    if constexpr (is_host_space<Space>) {
      (void)exec;
      std::memcpy(raw(), bytes, n);
    } else {
      const Kokkos::View<const unsigned char*, Kokkos::HostSpace,
                         Kokkos::MemoryTraits<Kokkos::Unmanaged>>
          h(static_cast<const unsigned char*>(bytes), n);
      const std::size_t first = std::size_t(guard_ * elem_);
      Kokkos::deep_copy(exec, Kokkos::subview(storage_, std::make_pair(first, first + n)), h);
      if (!converted.empty()) exec.fence();
    }
  }

  // Copies the interior back into `values` (after fencing `exec`), widened to
  // float; fails if a guard band changed. Not to be called by two threads at once.
  ::testing::AssertionResult download(const char* what, std::vector<float>& values,
                                      const Space& exec = Space()) const {
    if (int32_) throw std::logic_error("GuardedArray::download of an int32 array into floats");
    fetch(exec);
    values = decode(host_.data() + guard_ * elem_);
    return guards_intact(what);
  }
  // An int32 array's interior, likewise.
  ::testing::AssertionResult download(const char* what, std::vector<std::int32_t>& values,
                                      const Space& exec = Space()) const {
    if (!int32_) throw std::logic_error("GuardedArray::download of a float array into int32");
    fetch(exec);
    values.resize(std::size_t(size_));
    if (size_) std::memcpy(values.data(), host_.data() + guard_ * 4, std::size_t(size_) * 4);
    return guards_intact(what);
  }

 private:
  // Allocates the array and writes its guard bands into the host copy.
  GuardedArray(const std::string& label, std::int64_t size, Alignment alignment, llmk::DType dtype,
               bool int32)
      : dtype_(dtype),
        int32_(int32),
        elem_(int32 || dtype == llmk::DType::f32 ? 4 : 2),
        guard_(alignment == Alignment::Allocation ? 64 : 61),  // elements of NaN on each side
        size_(size),
        storage_(label, std::size_t(size_ + 2 * guard_) * elem_),
        host_(Kokkos::create_mirror_view(storage_)) {
    const std::vector<unsigned char> guard = guard_bytes();
    std::memcpy(host_.data(), guard.data(), guard.size());
    std::memcpy(host_.data() + (guard_ + size_) * elem_, guard.data(), guard.size());
  }

  // The whole array, guards included, into the host copy (after fencing exec).
  void fetch(const Space& exec) const {
    if constexpr (is_host_space<Space>) {
      exec.fence();
      std::memcpy(host_.data(), storage_.data(), host_.extent(0));
    } else {
      Kokkos::deep_copy(exec, host_, storage_);
      exec.fence();
    }
  }
  ::testing::AssertionResult guards_intact(const char* what) const {
    const std::vector<unsigned char> guard = guard_bytes();
    const std::string name(what);
    for (int side = 0; side < 2; ++side) {
      const unsigned char* g = host_.data() + (side ? (guard_ + size_) * elem_ : 0);
      if (std::memcmp(g, guard.data(), guard.size()) == 0) continue;
      std::int64_t i = 0;
      while (std::memcmp(g + i * elem_, guard.data(), std::size_t(elem_)) == 0) ++i;
      return ::testing::AssertionFailure()
             << name << "'s " << (side ? "trailing" : "leading") << " guard band changed: its element "
             << i << " (of " << guard_ << ") was written";
    }
    return ::testing::AssertionSuccess();
  }

  std::vector<unsigned char> guard_bytes() const {
    std::vector<unsigned char> g(std::size_t(guard_) * elem_);
    const float f = guard_nan();
    std::uint32_t bits;
    std::memcpy(&bits, &f, 4);
    const std::uint16_t half = std::uint16_t(bits >> 16);  // 0x7fa5: a signaling bf16 NaN
    for (std::int64_t i = 0; i < guard_; ++i) {
      if (elem_ == 4)
        std::memcpy(g.data() + i * 4, &f, 4);
      else
        std::memcpy(g.data() + i * 2, &half, 2);
    }
    return g;
  }
  void encode(const std::vector<float>& values, unsigned char* out) const {
    if (elem_ == 4) {
      if (size_) std::memcpy(out, values.data(), std::size_t(size_) * 4);
      return;
    }
    for (std::int64_t i = 0; i < size_; ++i) {
      const std::uint16_t b = llmk::reference::float_to_bf16_bits(values[std::size_t(i)]);
      std::memcpy(out + 2 * i, &b, 2);
    }
  }
  std::vector<float> decode(const unsigned char* in) const {
    std::vector<float> v(static_cast<std::size_t>(size_));
    if (elem_ == 4) {
      if (size_) std::memcpy(v.data(), in, std::size_t(size_) * 4);
      return v;
    }
    for (std::int64_t i = 0; i < size_; ++i) {
      std::uint16_t b;
      std::memcpy(&b, in + 2 * i, 2);
      v[std::size_t(i)] = llmk::reference::bf16_bits_to_float(b);
    }
    return v;
  }

  llmk::DType dtype_;
  bool int32_;
  std::int64_t elem_, guard_, size_;
  Kokkos::View<unsigned char*, Kokkos::LayoutRight, typename Space::device_type> storage_;
  typename Kokkos::View<unsigned char*, Kokkos::LayoutRight, typename Space::device_type>::HostMirror
      host_;
};

template <class Space, class DataType>
using UnmanagedView = Kokkos::View<DataType, Kokkos::LayoutRight, typename Space::device_type,
                                   Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// An unmanaged view of the array's interior, of its element type and the
// given extents (1 to 4), as the API's TensorRef: the conversion a user's
// typed view goes through.
template <class Space, class T>
llmk::TensorRef<Space> typed_view(void* data, const std::vector<std::int64_t>& e) {
  T* p = static_cast<T*>(data);
  switch (e.size()) {
    case 1: return UnmanagedView<Space, T*>(p, e[0]);
    case 2: return UnmanagedView<Space, T**>(p, e[0], e[1]);
    case 3: return UnmanagedView<Space, T***>(p, e[0], e[1], e[2]);
    default: return UnmanagedView<Space, T****>(p, e[0], e[1], e[2], e[3]);
  }
}
template <class Space>
llmk::TensorRef<Space> view_of(const GuardedArray<Space>& a, const std::vector<std::int64_t>& e) {
  return a.dtype() == llmk::DType::f32 ? typed_view<Space, float>(a.raw(), e)
                                       : typed_view<Space, llmk::bf16>(a.raw(), e);
}
// An input: through a view of const elements.
template <class Space, class T>
llmk::ConstTensorRef<Space> typed_const_view(const void* data, const std::vector<std::int64_t>& e) {
  const T* p = static_cast<const T*>(data);
  switch (e.size()) {
    case 1: return UnmanagedView<Space, const T*>(p, e[0]);
    case 2: return UnmanagedView<Space, const T**>(p, e[0], e[1]);
    case 3: return UnmanagedView<Space, const T***>(p, e[0], e[1], e[2]);
    default: return UnmanagedView<Space, const T****>(p, e[0], e[1], e[2], e[3]);
  }
}
template <class Space>
llmk::ConstTensorRef<Space> const_view_of(const GuardedArray<Space>& a,
                                          const std::vector<std::int64_t>& e) {
  return a.dtype() == llmk::DType::f32 ? typed_const_view<Space, float>(a.raw(), e)
                                       : typed_const_view<Space, llmk::bf16>(a.raw(), e);
}

}  // namespace llmk_test
