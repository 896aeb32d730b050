// Implementations "cublas" and "cublaslt": specializations for Kokkos::Cuda
// only (the primary template says "not available" on every other space), as
// KokkosKernels specializes its kernels for its TPLs. Defined in
// cublas_impl.cpp and cublaslt_impl.cpp.
#pragma once

#include <llmk/detail/problem.hpp>

namespace llmk::detail {

template <>
struct Implementation<Kokkos::Cuda, Impl::Cublas> {
  static constexpr bool available = true;
  static void run(const Kokkos::Cuda& exec, const Problem<Kokkos::Cuda>& p,
                  const MatmulBackwardOptions& options);
};

template <>
struct Implementation<Kokkos::Cuda, Impl::CublasLt> {
  static constexpr bool available = true;
  static void run(const Kokkos::Cuda& exec, const Problem<Kokkos::Cuda>& p,
                  const MatmulBackwardOptions& options);
};

}  // namespace llmk::detail
