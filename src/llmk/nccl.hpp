// llmk::nccl_communicator: the ranks of an NCCL communicator (one GPU each),
// for GradientReducers on Kokkos::Cuda. Each reducer issues its reductions
// (ncclAllReduce, or ncclReduceScatter in place; ncclAvg for averages) on a
// stream of its own, behind an event recorded on the backward pass's stream
// at ready(); wait() blocks the host until they are done (polling, with the
// timeout: NCCL itself never times out) and makes the backward's stream wait
// for them. On a timeout the communicator is aborted (ncclCommAbort): do not
// use or destroy it afterwards. `comm` must outlive the reducers. Link
// llmk::nccl (built with LLMK_ENABLE_NCCL).
#pragma once

#include <llmk/gradient_reducer.hpp>

#include <nccl.h>

namespace llmk {

Communicator<Kokkos::Cuda> nccl_communicator(ncclComm_t comm);

}  // namespace llmk
