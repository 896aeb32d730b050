// The example's device arrays: flat row-major Kokkos views on an execution
// space's device (llmk's views are LayoutRight; llm.c's buffers are flat).
#pragma once

#include <llmk/types.hpp>

#include <Kokkos_Core.hpp>

namespace gpt2 {

template <class ExecSpace, class T>
using Buffer = Kokkos::View<T*, Kokkos::LayoutRight, typename ExecSpace::device_type>;

template <class ExecSpace>
using Range = llmk::Range<ExecSpace>;

}  // namespace gpt2
