// The matmul backward's implementations: one ordered list. Its order is the
// order "auto" prefers them in (the first available on the space wins) and
// the order matmul_backward_impls() lists them; names, lookup, availability,
// dispatch, the perf table's rows and the tests' parameters all derive from
// it. To add an implementation: write its struct in its own header (the
// traits of ImplDefaults in problem.hpp, and run()), include it here and put
// it in the list (docs/design.md, "Adding an implementation").
#pragma once

#include <core/registry.hpp>
#include <ops/matmul_backward/naive.hpp>
#include <ops/matmul_backward/team.hpp>
#include <ops/matmul_backward/tiled.hpp>

#include <backends/cublas/matmul_backward_cublas.hpp>
#include <backends/kokkoskernels/matmul_backward_kokkoskernels.hpp>

namespace llmk::op::matmul_backward {

// The vendor BLAS first: on a 2-core Zen 3, OpenBLAS (through KokkosKernels)
// is ~1.4× faster than tiled at the seed shape; on an H200 cuBLAS is ~2×
// faster (docs/performance.md). cuBLASLt's fused BGRADB measured no faster
// than cuBLAS + column_sums there, so cublas comes first.
using Implementations =
    core::ImplList<Cublas, CublasSerial, CublasLt, KokkosKernels, Tiled, Team, Naive>;

template <class I, class ExecSpace>
constexpr bool available_on = I::compiled && I::template available_on<ExecSpace>();

}  // namespace llmk::op::matmul_backward
