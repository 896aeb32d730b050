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

// Whether the build's device is there: false, with a line saying so, in a
// CUDA build on a machine without a GPU (the programs then exit 77: CTest's
// "skipped"); true in a host build.
bool have_gpu();

}  // namespace gpt2
