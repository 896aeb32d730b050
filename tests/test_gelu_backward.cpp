// llmk::gelu_backward and llmk::gelu_forward on the execution space LLMK_TEST_SPACE: the contract
// tests (tests/contract/) with gelu's adapter (support/gelu_adapter.hpp).
// Its own tests (rank-1 views, misaligned arrays, gelu's special values) are
// test_gelu_cases.cpp's.
#include "contract/all.hpp"
#include "support/gelu_adapter.hpp"
#include "support/gelu_forward_adapter.hpp"

#ifndef LLMK_TEST_SPACE
#error "compile with -DLLMK_TEST_SPACE=<a Kokkos execution space: Serial, OpenMP, Cuda>"
#endif

namespace {

using Space = Kokkos::LLMK_TEST_SPACE;

[[maybe_unused]] const bool registered =
    (llmk_test::contract::register_space_tests<llmk_test::GeluBackwardContract, Space>(),
     llmk_test::contract::register_space_tests<llmk_test::GeluForwardContract, Space>(), true);

}  // namespace
