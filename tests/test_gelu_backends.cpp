// llmk::gelu_backward and llmk::gelu_forward on one backend against another (backends binary):
// OpenMP against Serial bit for bit, Cuda against OpenMP within tolerances.
#include "contract/backends.hpp"
#include "support/gelu_adapter.hpp"
#include "support/gelu_forward_adapter.hpp"

namespace {

[[maybe_unused]] const bool registered =
    (llmk_test::contract::register_backend_pairs<llmk_test::GeluBackwardContract>(),
     llmk_test::contract::register_backend_pairs<llmk_test::GeluForwardContract>(), true);

}  // namespace
