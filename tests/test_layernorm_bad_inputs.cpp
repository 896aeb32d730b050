// llmk::layernorm_backward's bad inputs, on the default host execution space
// (argument checks run on the host before any kernel, whatever the space):
// the contract's (tests/contract/bad_inputs.hpp) with its adapter. Each call
// throws std::invalid_argument naming the argument and leaves every array
// bitwise as it was.
#include "contract/bad_inputs.hpp"
#include "support/layernorm_adapter.hpp"

namespace {

[[maybe_unused]] const bool registered =
    (llmk_test::contract::register_bad_input_tests<llmk_test::LayernormBackwardContract,
                                                   Kokkos::DefaultHostExecutionSpace>(),
     true);

}  // namespace
