// Row products out(r, :) += Σ_k opA(r, k) · B(k, :) with one team per output
// row (the kernel of matmul's "team" implementation). A team owns one row; it
// stages a chunk of that row's coefficients in team scratch, then its threads
// (TeamThreadRange) and vector lanes (ThreadVectorRange) sweep the row's
// columns, lanes on consecutive columns so that GPU loads coalesce. Host
// spaces instead take the chunk's coefficients one by one and update the
// whole row (TeamTuning::k_outer), which vectorizes.
#pragma once

#include <kernels/tuning.hpp>
#include <llmk/types.hpp>

namespace llmk::kernels {

// out(r, c) += Σ_k opA(r, k) · B(k, c), with opA = A (TransA = false) or Aᵀ.
// The league has a team per row of out: Kokkos 3's league size is an int, so
// out may have at most 2³¹ − 1 rows.
// A and B: float or bf16 (converted on load); out: float.
template <bool TransA, class ExecSpace, class TI>
void team_row_products(const ExecSpace& exec, const char* label, const Matrix<ExecSpace>& out,
                       const ConstMatrix<ExecSpace, TI>& A, const ConstMatrix<ExecSpace, TI>& B) {
  using Tuning = TeamTuning<ExecSpace>;
  using Policy = Kokkos::TeamPolicy<ExecSpace, Kokkos::IndexType<index_t>>;
  using Member = typename Policy::member_type;
  using Scratch = Kokkos::View<float*, typename ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  constexpr index_t chunk = Tuning::scratch_chunk;
  constexpr index_t lanes = Tuning::vector_length;
  const index_t K = B.extent(0), cols = B.extent(1);
  const index_t col_blocks = (cols + lanes - 1) / lanes;

  Policy policy(exec, index_t(out.extent(0)), Tuning::team_size, Tuning::vector_length);
  policy = policy.set_scratch_size(0, Kokkos::PerTeam(Scratch::shmem_size(chunk)));
  Kokkos::parallel_for(
      label, policy, KOKKOS_LAMBDA(const Member& team) {
        const index_t r = team.league_rank();
        Scratch coef(team.team_scratch(0), chunk);
        for (index_t k0 = 0; k0 < K; k0 += chunk) {
          const index_t len = K - k0 < chunk ? K - k0 : chunk;
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, len), [&](const index_t k) {
            coef(k) = to_float(TransA ? A(k0 + k, r) : A(r, k0 + k));
          });
          team.team_barrier();
          if (Tuning::k_outer) {  // not constexpr: nvcc's extended lambdas may not first-capture
                                  // there
            // Host: the seed's loop order, rank-1 updates along contiguous rows
            // of B (a vectorized loop; out's row stays in L1). Each thread
            // keeps the same columns for every k, so no barrier is needed.
            for (index_t k = 0; k < len; ++k) {
              const float a = coef(k);
              Kokkos::parallel_for(Kokkos::TeamThreadRange(team, cols), [&](const index_t c) {
                out(r, c) += a * to_float(B(k0 + k, c));
              });
            }
          } else {
            // GPU: a dot product per column in a register, lanes on consecutive
            // columns (coalesced), one update of out per chunk.
            Kokkos::parallel_for(Kokkos::TeamThreadRange(team, col_blocks), [&](const index_t blk) {
              Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, lanes), [&](const index_t lane) {
                const index_t c = blk * lanes + lane;
                if (c >= cols) return;
                float sum = 0.0f;
                for (index_t k = 0; k < len; ++k) sum += coef(k) * to_float(B(k0 + k, c));
                out(r, c) += sum;
              });
            });
          }
          team.team_barrier();  // coef is rewritten by the next chunk
        }
      });
}

}  // namespace llmk::kernels
