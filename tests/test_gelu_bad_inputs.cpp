// llmk::gelu_backward's argument checks (validation binary): the contract's
// bad inputs on the default host space.
#include "contract/bad_inputs.hpp"
#include "support/gelu_adapter.hpp"

namespace {

using Host = Kokkos::DefaultHostExecutionSpace;

[[maybe_unused]] const bool registered =
    (llmk_test::contract::register_bad_input_tests<llmk_test::GeluBackwardContract, Host>(), true);

}  // namespace
