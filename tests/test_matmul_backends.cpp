// llmk::matmul_backward on two backends, the same problems
// (tests/contract/backends.hpp): OpenMP against Serial, Cuda against OpenMP,
// within the sum of the two sides' tolerances (tiled's host split-K splits a
// product over the space's threads: OpenMP and Serial add in other orders),
// every precision and GELU off and on; tf32 on Cuda against fp32 on OpenMP.
#include "contract/backends.hpp"
#include "support/matmul_adapter.hpp"
#include "support/matmul_forward_adapter.hpp"

namespace {

[[maybe_unused]] const bool registered =
    (llmk_test::contract::register_backend_pairs<llmk_test::MatmulBackwardContract>(),
     llmk_test::contract::register_backend_pairs<llmk_test::MatmulForwardContract>(), true);

}  // namespace
