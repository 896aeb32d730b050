// llmk::mpi_communicator: the ranks of an MPI communicator, for
// GradientReducers on host spaces (Serial, OpenMP): gradients in host
// memory, reduced with MPI's non-blocking collectives (MPI_Iallreduce,
// MPI_Ireduce_scatter_block) on a duplicate of `comm` that each reducer makes
// for itself (MPI_Comm_dup: the reducer's constructor is collective), so its
// collectives never match the caller's own. Link llmk::mpi (built with
// LLMK_ENABLE_MPI).
//
// Progress: MPI moves a non-blocking collective forward only inside MPI
// calls (Open MPI has no progress thread by default): ready() and wait()
// test what is in flight, so a reduction advances between ready() calls
// only as far as its first messages. bf16 buffers go through a user-defined
// MPI operation (float sum, one rounding per addition); averages divide the
// sum by the rank count after it arrives (one more rounding).
#pragma once

#include <llmk/gradient_reducer.hpp>

#include <mpi.h>

namespace llmk {

template <class ExecSpace = Kokkos::DefaultHostExecutionSpace>
Communicator<ExecSpace> mpi_communicator(MPI_Comm comm);

}  // namespace llmk
