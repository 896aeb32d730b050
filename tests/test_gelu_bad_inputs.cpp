// The elementwise operations' argument checks (llmk::gelu_backward, llmk::gelu_forward,
// llmk::residual_forward; validation binary): the contract's bad inputs on the default host space.
#include "contract/bad_inputs.hpp"
#include "support/gelu_adapter.hpp"
#include "support/gelu_forward_adapter.hpp"
#include "support/residual_forward_adapter.hpp"

namespace {

using Host = Kokkos::DefaultHostExecutionSpace;

[[maybe_unused]] const bool registered =
    (llmk_test::contract::register_bad_input_tests<llmk_test::GeluBackwardContract, Host>(),
     llmk_test::contract::register_bad_input_tests<llmk_test::GeluForwardContract, Host>(),
     llmk_test::contract::register_bad_input_tests<llmk_test::ResidualForwardContract, Host>(),
     true);

}  // namespace
