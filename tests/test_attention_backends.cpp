// llmk::attention_backward, attention_backward_recompute and attention_forward on two
// backends, the same problems (tests/contract/backends.hpp): OpenMP against
// Serial, Cuda against OpenMP, within the sum of the two sides' tolerances ("materialized"'s GEMMs split K
// by a host's thread count, so not bit for bit; "flash" is the same bits on
// Serial and OpenMP, which share a tuning).
#include "contract/backends.hpp"
#include "support/attention_forward_adapter.hpp"

namespace {

[[maybe_unused]] const bool registered =
    (llmk_test::contract::register_backend_pairs<llmk_test::AttentionBackwardContract>(),
     llmk_test::contract::register_backend_pairs<llmk_test::AttentionBackwardRecomputeContract>(),
     llmk_test::contract::register_backend_pairs<llmk_test::AttentionForwardContract>(),
     true);

}  // namespace
