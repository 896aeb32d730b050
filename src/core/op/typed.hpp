// From an entry point's type-erased arguments (TensorRef) to the typed,
// unmanaged views an implementation computes on, once the call's precision
// configuration is known; and the shape helpers the entry points share.
#pragma once

#include <llmk/tensor_ref.hpp>
#include <llmk/types.hpp>

#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>

namespace llmk::core::op {

template <class T, class ExecSpace>
using UnmanagedMatrix = Kokkos::View<T**, Kokkos::LayoutRight, typename ExecSpace::device_type,
                                     Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class T, class ExecSpace>
using UnmanagedVector = Kokkos::View<T*, Kokkos::LayoutRight, typename ExecSpace::device_type,
                                     Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// A rows × cols view of a reference's data as T (an absent one: empty).
template <class T, class ExecSpace, bool Const>
UnmanagedMatrix<std::conditional_t<Const, const T, T>, ExecSpace> typed_matrix(
    const TensorRefT<ExecSpace, Const>& r, index_t rows, index_t cols) {
  using E = std::conditional_t<Const, const T, T>;
  if (r.empty()) return {};
  return UnmanagedMatrix<E, ExecSpace>(static_cast<E*>(r.data()), rows, cols);
}
// All of a reference's elements as a vector of T (an absent one: empty).
template <class T, class ExecSpace, bool Const>
UnmanagedVector<std::conditional_t<Const, const T, T>, ExecSpace> typed_vector(
    const TensorRefT<ExecSpace, Const>& r) {
  using E = std::conditional_t<Const, const T, T>;
  if (r.empty()) return {};
  return UnmanagedVector<E, ExecSpace>(static_cast<E*>(r.data()), r.size());
}

// Throws std::invalid_argument for a negative size of a raw-pointer entry.
inline void check_dimensions(const char* op,
                             std::initializer_list<std::pair<const char*, index_t>> dims) {
  for (const auto& [name, value] : dims) {
    if (value < 0)
      throw std::invalid_argument(std::string(op) + ": dimension " + name + " = " +
                                  std::to_string(value) + " is negative");
  }
}

template <class ExecSpace, class View>
void fill_zero(const ExecSpace& exec, const View& v) {
  if (v.size() > 0) Kokkos::deep_copy(exec, v, typename View::non_const_value_type(0.0f));
}

}  // namespace llmk::core::op
