// llmk::layernorm_backward on two backends, the same problems
// (tests/contract/backends.hpp): OpenMP against Serial bit for bit (its
// column sums are added in an order fixed by M and C, whatever the thread
// count), Cuda against OpenMP within the tolerances.
#include "contract/backends.hpp"
#include "support/layernorm_adapter.hpp"

namespace {

using Op = llmk_test::LayernormBackwardContract;

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
