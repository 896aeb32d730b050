// The execution space a per-space test binary tests: LLMK_TEST_SPACE, which
// tests/CMakeLists.txt defines for each binary (Serial, OpenMP, Cuda).
#pragma once

#include <Kokkos_Core.hpp>

#ifndef LLMK_TEST_SPACE
#error "compile with -DLLMK_TEST_SPACE=<a Kokkos execution space: Serial, OpenMP, Cuda>"
#endif

namespace llmk_test {
using TestSpace = Kokkos::LLMK_TEST_SPACE;
}  // namespace llmk_test
