// Data parallelism in the example: the global batch of B sequences split
// into R ranks' parts of B/R, each rank's backward on its part, the
// parameter gradients summed across ranks by llmk::GradientReducer (NCCL on
// a CUDA build, MPI on a host build), checked against the single-process
// reference of the whole batch and against the other ranks' (bitwise).
#pragma once

#include "model.hpp"

#include <map>
#include <string>
#include <vector>

namespace gpt2 {

// Rank `rank` of `ranks`' part of the global batch: its sequences
// [rank·B/R, (rank+1)·B/R) of every activation, token and target (the
// parameters whole). B must be a multiple of `ranks`.
HostInputs batch_slice(const HostInputs& global, int rank, int ranks);

// The same sequences of what is per position in the reference: the losses
// (B, T) and grad.encoded (B, T, C); the parameter gradients whole.
Doubles reference_slice(const Doubles& global, const Config& cfg, int rank, int ranks);
std::vector<double> losses_slice(const std::vector<double>& global, const Config& cfg, int rank,
                                 int ranks);

struct DataParallelRun {
  bool materialized = false;
  double tolerance = 0;
  int repeats = 0;
  Impls impls;
};

// The example on MPI_COMM_WORLD's ranks (data_parallel_run.cpp, built where
// MPI is): every rank holds the global inputs and reference; returns the
// exit status (0: every gradient within tolerance and equal on every rank).
template <class T>
int run_data_parallel(const HostInputs& global, const Doubles& want,
                      const std::vector<double>& want_losses, const DataParallelRun& how);

}  // namespace gpt2
