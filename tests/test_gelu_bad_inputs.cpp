// The elementwise operations' argument checks (llmk::gelu_backward, llmk::gelu_forward,
// llmk::residual_forward, llmk::adamw, llmk::squared_norm; validation binary): the contract's bad inputs on the default host space.
#include "contract/bad_inputs.hpp"
#include "support/adamw_adapter.hpp"
#include "support/gelu_adapter.hpp"
#include "support/gelu_forward_adapter.hpp"
#include "support/residual_forward_adapter.hpp"
#include "support/squared_norm_adapter.hpp"

namespace {

using Host = Kokkos::DefaultHostExecutionSpace;

[[maybe_unused]] const bool registered =
    (llmk_test::contract::register_bad_input_tests<llmk_test::GeluBackwardContract, Host>(),
     llmk_test::contract::register_bad_input_tests<llmk_test::GeluForwardContract, Host>(),
     llmk_test::contract::register_bad_input_tests<llmk_test::ResidualForwardContract, Host>(),
     llmk_test::contract::register_bad_input_tests<llmk_test::AdamWContract, Host>(),
     llmk_test::contract::register_bad_input_tests<llmk_test::SquaredNormContract, Host>(), true);

}  // namespace
