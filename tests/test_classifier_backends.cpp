// llmk::classifier_backward on one backend against another (backends
// binary): OpenMP against Serial bit for bit (one host tuning), Cuda against
// OpenMP within twice the per-element tolerances.
#include "contract/backends.hpp"
#include "support/classifier_adapter.hpp"

namespace {

[[maybe_unused]] const bool registered =
    (llmk_test::contract::register_backend_pairs<llmk_test::ClassifierBackwardContract>(), true);

}  // namespace
