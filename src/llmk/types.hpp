// View types of llmk's public API: float32, Kokkos::LayoutRight (row-major, as
// llm.c's buffers), on the device (execution space + memory space) that runs
// them. Views of the same memory space convert implicitly; the device type
// matters to libraries that pick their execution space from the view
// (KokkosBlas::gemm on a Serial view must not run on OpenMP).
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>

namespace llmk {

using index_t = std::int64_t;  // element counts can exceed 2^31 (B*T*OC of an LM head)

template <class ExecSpace>
using Matrix = Kokkos::View<float**, Kokkos::LayoutRight, typename ExecSpace::device_type>;
template <class ExecSpace>
using ConstMatrix = Kokkos::View<const float**, Kokkos::LayoutRight, typename ExecSpace::device_type>;
template <class ExecSpace>
using Vector = Kokkos::View<float*, Kokkos::LayoutRight, typename ExecSpace::device_type>;
template <class ExecSpace>
using ConstVector = Kokkos::View<const float*, Kokkos::LayoutRight, typename ExecSpace::device_type>;
template <class ExecSpace>
using Tensor3 = Kokkos::View<float***, Kokkos::LayoutRight, typename ExecSpace::device_type>;
template <class ExecSpace>
using ConstTensor3 = Kokkos::View<const float***, Kokkos::LayoutRight, typename ExecSpace::device_type>;

// A 64-bit-indexed range policy on the caller's execution-space instance.
template <class ExecSpace>
using Range = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>;

}  // namespace llmk
