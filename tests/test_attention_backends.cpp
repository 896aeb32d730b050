// llmk::attention_backward on two backends, the same problems
// (tests/contract/backends.hpp): OpenMP against Serial, Cuda against OpenMP,
// within the sum of the two sides' tolerances ("materialized"'s GEMMs split K
// by a host's thread count, so not bit for bit).
#include "contract/backends.hpp"
#include "support/attention_adapter.hpp"

namespace {

using Op = llmk_test::AttentionBackwardContract;

[[maybe_unused]] const bool registered = [] {
#if defined(KOKKOS_ENABLE_OPENMP) && defined(KOKKOS_ENABLE_SERIAL)
  llmk_test::contract::register_backend_tests<Op, Kokkos::OpenMP, Kokkos::Serial>();
#endif
#if defined(KOKKOS_ENABLE_CUDA) && defined(KOKKOS_ENABLE_OPENMP)
  llmk_test::contract::register_backend_tests<Op, Kokkos::Cuda, Kokkos::OpenMP>();
#endif
  return true;
}();

}  // namespace
