// The matmul backward's implementations: one ordered list. Its order is the
// order "auto" prefers them in (the first available on the space wins) and
// the order matmul_backward_impls() lists them; names, lookup, availability,
// dispatch, the perf table's rows and the tests' parameters all derive from
// it. To add an implementation: write its struct in its own header (the
// traits of ImplDefaults in problem.hpp, and run()), include it here and put
// it in the list (docs/design.md, "Adding an implementation"). A vendor's is
// declared here too and defined in backends/ (cublas.hpp).
#pragma once

#include <core/registry.hpp>
#include <ops/matmul_backward/naive.hpp>
#include <ops/matmul_backward/team.hpp>
#include <ops/matmul_backward/tiled.hpp>

#include <ops/matmul_backward/cublas.hpp>
#include <ops/matmul_backward/kokkoskernels.hpp>

namespace llmk::op::matmul_backward {

// The vendor BLAS first: on a 2-core Zen 3, OpenBLAS (through KokkosKernels)
// is ~1.4× faster than tiled at the seed shape (on a host "auto" takes it only
// where that BLAS shares Kokkos' threads: KokkosKernels::host_blas); on an
// H200 cuBLAS is ~2× faster (docs/performance.md). cuBLASLt's fused BGRADB
// measured no faster than cuBLAS + column_sums there, so cublas comes first.
using Implementations =
    core::ImplList<Cublas, CublasSerial, CublasLt, KokkosKernels, Tiled, Team, Naive>;

using core::op::available_on;

}  // namespace llmk::op::matmul_backward
