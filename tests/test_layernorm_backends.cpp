// llmk::layernorm_backward on two backends, the same problems
// (tests/contract/backends.hpp): OpenMP against Serial bit for bit (its
// column sums are added in an order fixed by M and C, whatever the thread
// count), Cuda against OpenMP within the tolerances.
#include "contract/backends.hpp"
#include "support/layernorm_adapter.hpp"
#include "support/layernorm_forward_adapter.hpp"

namespace {

[[maybe_unused]] const bool registered =
    (llmk_test::contract::register_backend_pairs<llmk_test::LayernormBackwardContract>(),
     llmk_test::contract::register_backend_pairs<llmk_test::LayernormForwardContract>(), true);

}  // namespace
