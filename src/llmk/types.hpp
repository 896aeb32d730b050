// View types of llmk's public API: Kokkos::LayoutRight (row-major, as llm.c's
// buffers) of float (the default) or llmk::bf16, on the device (execution
// space + memory space) that runs them. Views of the same memory space convert implicitly; the device type
// matters to libraries that pick their execution space from the view
// (KokkosBlas::gemm on a Serial view must not run on OpenMP).
#pragma once

#include <llmk/bf16.hpp>

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <type_traits>

namespace llmk {

using index_t = std::int64_t;  // element counts can exceed 2^31 (B*T*OC of an LM head)

// The element types of llmk's arguments.
enum class DType : std::uint8_t { f32, bf16 };

template <class T>
constexpr DType dtype_of() {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, bf16>,
                "llmk's element types are float and llmk::bf16");
  return std::is_same_v<T, float> ? DType::f32 : DType::bf16;
}

constexpr const char* dtype_name(DType t) { return t == DType::f32 ? "float32" : "bf16"; }

template <class ExecSpace, class T = float>
using Matrix = Kokkos::View<T**, Kokkos::LayoutRight, typename ExecSpace::device_type>;
template <class ExecSpace, class T = float>
using ConstMatrix = Kokkos::View<const T**, Kokkos::LayoutRight, typename ExecSpace::device_type>;
template <class ExecSpace, class T = float>
using Vector = Kokkos::View<T*, Kokkos::LayoutRight, typename ExecSpace::device_type>;
template <class ExecSpace, class T = float>
using ConstVector = Kokkos::View<const T*, Kokkos::LayoutRight, typename ExecSpace::device_type>;
template <class ExecSpace, class T = float>
using Tensor3 = Kokkos::View<T***, Kokkos::LayoutRight, typename ExecSpace::device_type>;
template <class ExecSpace, class T = float>
using ConstTensor3 = Kokkos::View<const T***, Kokkos::LayoutRight, typename ExecSpace::device_type>;

// A 64-bit-indexed range policy on the caller's execution-space instance.
template <class ExecSpace>
using Range = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>;

}  // namespace llmk
