// llmk::gelu_backward and llmk::gelu_forward's argument checks (validation binary): the contract's
// bad inputs on the default host space.
#include "contract/bad_inputs.hpp"
#include "support/gelu_adapter.hpp"
#include "support/gelu_forward_adapter.hpp"

namespace {

using Host = Kokkos::DefaultHostExecutionSpace;

[[maybe_unused]] const bool registered =
    (llmk_test::contract::register_bad_input_tests<llmk_test::GeluBackwardContract, Host>(),
     llmk_test::contract::register_bad_input_tests<llmk_test::GeluForwardContract, Host>(), true);

}  // namespace
