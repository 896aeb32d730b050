// llmk::encoder_backward on one backend against another (backends binary):
// OpenMP against Serial bit for bit, Cuda against OpenMP (within the sum of
// two tolerances; the same bits are promised there too, which the Cuda
// binary's Order tests check against the host's float32 sums).
#include "contract/backends.hpp"
#include "support/encoder_adapter.hpp"
#include "support/encoder_forward_adapter.hpp"

namespace {

[[maybe_unused]] const bool registered =
    (llmk_test::contract::register_backend_pairs<llmk_test::EncoderBackwardContract>(),
     llmk_test::contract::register_backend_pairs<llmk_test::EncoderForwardContract>(), true);

}  // namespace
