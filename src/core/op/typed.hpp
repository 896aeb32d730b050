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

// A rank-2 (rows × cols) reference to the same dense array; an absent one
// stays absent.
template <class Ref>
Ref flattened(const Ref& r, index_t rows, index_t cols) {
  if (r.empty()) return r;
  return Ref({r.data(), r.dtype()}, {rows, cols});
}
// The same as a vector of `count` elements.
template <class Ref>
Ref flattened(const Ref& r, index_t count) {
  if (r.empty()) return r;
  return Ref({r.data(), r.dtype()}, {count});
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

// Throws std::invalid_argument unless every one of `others` with elements
// has the element type of `leader`, the inputs that share one (`group`).
template <class ExecSpace>
void check_same_type(
    const char* op, const char* leader_name, const ConstTensorRef<ExecSpace>& leader,
    std::initializer_list<std::pair<const char*, const ConstTensorRef<ExecSpace>*>> others,
    const char* group) {
  for (const auto& [name, ref] : others) {
    if (ref->size() == 0 || ref->dtype() == leader.dtype()) continue;
    throw std::invalid_argument(std::string(op) + ": argument '" + name + "' is " +
                                dtype_name(ref->dtype()) + " but " + leader_name + " is " +
                                dtype_name(leader.dtype()) + "; " + group +
                                " share one element type");
  }
}

template <class ExecSpace, class View>
void fill_zero(const ExecSpace& exec, const View& v) {
  if (v.size() > 0) Kokkos::deep_copy(exec, v, typename View::non_const_value_type(0.0f));
}

}  // namespace llmk::core::op
