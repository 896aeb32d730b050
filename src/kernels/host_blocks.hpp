// Element loops on host spaces that the compiler vectorizes.
//
// A Kokkos range loop calls its body once per index through the functor, and
// GCC 12 does not vectorize across those calls: gelu_backward, the
// classifier and the GELU factor after a GEMM ran one element at a time
// (gelu_backward 6 % of a copy's bandwidth on 16 Xeon cores, docs/cpu.md).
// for_each_block hands each thread step a block of consecutive indices
// instead, and the kernel's block function loops over them with raw
// pointers under LLMK_SIMD (OpenMP's `omp simd`: the iterations are
// independent), which GCC turns into AVX-512 code, fast_math.hpp's
// exponentials included.
#pragma once

#include <kernels/tuning.hpp>
#include <llmk/types.hpp>

#include <Kokkos_Core.hpp>

namespace llmk::kernels {

// Indices a block: 16 KiB of floats per array, in L1 with its neighbours',
// and enough blocks for every thread from ~1 M elements up.
inline constexpr index_t kHostBlock = 4096;

// block(i0, i1) for consecutive blocks [i0, i1) of [0, n), in parallel on
// exec (a host space).
template <class ExecSpace, class Block>
void for_each_block(const char* label, const ExecSpace& exec, const index_t n,
                    const Block& block) {
  static_assert(Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                           typename ExecSpace::memory_space>::accessible,
                "for_each_block runs on host spaces");
  const index_t blocks = (n + kHostBlock - 1) / kHostBlock;
  Kokkos::parallel_for(label, Range<ExecSpace>(exec, 0, blocks), [=](const index_t b) {
    const index_t i0 = b * kHostBlock;
    block(i0, n - i0 < kHostBlock ? n : i0 + kHostBlock);
  });
}

}  // namespace llmk::kernels
