// llmk::squared_norm on the execution space LLMK_TEST_SPACE: the contract
// tests (tests/contract/) with its adapter (support/squared_norm_adapter.hpp);
// its chunks (8192 values), their remainders and its empty sums are the
// adapter's shapes.
#include "contract/all.hpp"
#include "support/squared_norm_adapter.hpp"

#ifndef LLMK_TEST_SPACE
#error "compile with -DLLMK_TEST_SPACE=<a Kokkos execution space: Serial, OpenMP, Cuda>"
#endif

namespace {

[[maybe_unused]] const bool registered =
    (llmk_test::contract::register_space_tests<llmk_test::SquaredNormContract,
                                               Kokkos::LLMK_TEST_SPACE>(),
     true);

}  // namespace
