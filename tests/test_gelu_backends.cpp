// The elementwise operations (llmk::gelu_backward, llmk::gelu_forward, llmk::residual_forward,
// llmk::adamw, llmk::squared_norm) on one backend against another (backends binary):
// OpenMP against Serial bit for bit, Cuda against OpenMP within tolerances.
#include "contract/backends.hpp"
#include "support/adamw_adapter.hpp"
#include "support/gelu_adapter.hpp"
#include "support/gelu_forward_adapter.hpp"
#include "support/residual_forward_adapter.hpp"
#include "support/squared_norm_adapter.hpp"

namespace {

[[maybe_unused]] const bool registered =
    (llmk_test::contract::register_backend_pairs<llmk_test::GeluBackwardContract>(),
     llmk_test::contract::register_backend_pairs<llmk_test::GeluForwardContract>(),
     llmk_test::contract::register_backend_pairs<llmk_test::ResidualForwardContract>(),
     llmk_test::contract::register_backend_pairs<llmk_test::AdamWContract>(),
     llmk_test::contract::register_backend_pairs<llmk_test::SquaredNormContract>(), true);

}  // namespace
