// llmk::layernorm_backward's suite in the per-space binary (LLMK_TEST_SPACE):
// the contract tests every operation passes (tests/contract/), instantiated
// with its adapter (support/layernorm_adapter.hpp). Names:
// "layernorm_backward/<aspect>.<case>"; tests/README.md lists the aspects.
// (Bad arguments on the host: test_layernorm_bad_inputs.cpp, in the
// validation binary; M·C ≥ 2³¹: test_layernorm_huge.cpp.)
#include "contract/all.hpp"
#include "support/layernorm_adapter.hpp"
#include "support/layernorm_forward_adapter.hpp"

#ifndef LLMK_TEST_SPACE
#error "compile with -DLLMK_TEST_SPACE=<a Kokkos execution space: Serial, OpenMP, Cuda>"
#endif

namespace {

using Space = Kokkos::LLMK_TEST_SPACE;

[[maybe_unused]] const bool registered =
    (llmk_test::contract::register_space_tests<llmk_test::LayernormBackwardContract, Space>(),
     llmk_test::contract::register_space_tests<llmk_test::LayernormForwardContract, Space>(), true);

}  // namespace
