// llmk::attention_backward and attention_backward_recompute on two
// backends, the same problems (tests/contract/backends.hpp): OpenMP against
// Serial, Cuda against OpenMP, within the sum of the two sides' tolerances ("materialized"'s GEMMs split K
// by a host's thread count, so not bit for bit; "flash" is the same bits on
// Serial and OpenMP, which share a tuning).
#include "contract/backends.hpp"
#include "support/attention_recompute_adapter.hpp"

namespace {

[[maybe_unused]] const bool registered =
    (llmk_test::contract::register_backend_pairs<llmk_test::AttentionBackwardContract>(),
     llmk_test::contract::register_backend_pairs<llmk_test::AttentionBackwardRecomputeContract>(),
     true);

}  // namespace
