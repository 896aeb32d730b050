// The matmul backward's implementations: one ordered list. Its order is the
// order "auto" prefers them in (the first available on the space wins) and
// the order llmk::impls<llmk::MatmulBackward>() lists them; names, lookup, availability,
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
#include <ops/matmul_backward/onednn.hpp>

namespace llmk::op::matmul_backward {

// The vendor BLAS first: on a 2-core Zen 3, OpenBLAS (through KokkosKernels)
// is ~1.4× faster than tiled at the seed shape (on a host "auto" takes it only
// where that BLAS shares Kokkos' threads: KokkosKernels::host_blas); on an
// H200 cuBLAS is ~2× faster (docs/performance.md). cuBLASLt's fused BGRADB
// measured no faster than cuBLAS + column_sums there, so cublas comes first.
// On hosts oneDNN comes after the BLAS and before tiled, and only where its
// kernels fit the CPU (Onednn::auto_skips). float32: on 2 Zen 4 cores
// (AVX-512, AVX512-BF16) at GPT-2 124M's five products (M 2048), oneDNN 2.6
// and OpenBLAS 0.3.21 measured within each other's noise (oneDNN 0.73-1.14x
// OpenBLAS's GFLOP/s over two runs on a shared machine; docs/cpu.md), so
// "auto" keeps kokkoskernels where the BLAS rule takes it and takes onednn
// where that rule refuses the BLAS (1.2-1.9x tiled there). bf16, which the
// BLAS does not run: oneDNN's AVX512-BF16 kernels measured 2.5-3.2x tiled,
// AMX on 16 Xeon cores 8-12x. Where tiled has its AVX-512 tile, "auto"
// passes kokkoskernels and onednn over in float32 (auto_passes_over):
// tiled's 8 × 48 register tile ran GPT-2 124M's backward faster than
// OpenBLAS on 16 Xeon cores (Tiled::leads_host_fp32, docs/cpu.md).
using Implementations =
    core::ImplList<Cublas, CublasSerial, CublasLt, KokkosKernels, Onednn, Tiled, Team, Naive>;

using core::op::available_on;

}  // namespace llmk::op::matmul_backward
