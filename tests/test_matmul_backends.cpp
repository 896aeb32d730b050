// llmk::matmul_backward on two backends, the same problems
// (tests/contract/backends.hpp): OpenMP against Serial, Cuda against OpenMP,
// within the sum of the two sides' tolerances (tiled's host split-K splits a
// product over the space's threads: OpenMP and Serial add in other orders),
// every precision and GELU off and on; tf32 on Cuda against fp32 on OpenMP.
#include "contract/backends.hpp"
#include "support/matmul_adapter.hpp"

namespace {

using Op = llmk_test::MatmulBackwardContract;

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
