// llmk::encoder_backward's argument checks (validation binary): the
// contract's bad inputs on the default host space (tokens an int32 input).
// Bad tokens (values) and the ranks the contract does not try are the
// per-space binary's (test_encoder_backward.cpp: tokens are checked on the
// device).
#include "contract/bad_inputs.hpp"
#include "support/encoder_adapter.hpp"
#include "support/encoder_forward_adapter.hpp"

namespace {

using Host = Kokkos::DefaultHostExecutionSpace;

[[maybe_unused]] const bool registered =
    (llmk_test::contract::register_bad_input_tests<llmk_test::EncoderBackwardContract, Host>(),
     llmk_test::contract::register_bad_input_tests<llmk_test::EncoderForwardContract, Host>(),
     true);

}  // namespace
