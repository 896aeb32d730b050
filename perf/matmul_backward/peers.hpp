// Peers: codes other than llmk's, timed in the same run on the same inputs and
// validated like llmk's implementations. Each names the Kokkos backends it
// runs on (its pointers are in that backend's memory space). In the table a
// peer's row is "peer:<name>", never the name of an implementation.
#pragma once

#include <llmk/types.hpp>

#include <functional>
#include <string>
#include <vector>

namespace llmk::perf::matmul_backward {

// Row-major buffers in the backend's memory space, as llm.c passes them.
struct PeerArgs {
  float* dinp;     // M × C, accumulated
  float* dweight;  // OC × C, accumulated
  float* dbias;    // OC, accumulated
  const float* dout;    // M × OC
  const float* inp;     // M × C
  const float* weight;  // OC × C
  index_t M, C, OC;
  int threads;  // host threads a host peer may use
};

struct Peer {
  std::string name;                   // the row is "peer:<name>"
  std::vector<std::string> backends;  // Kokkos backend names, as ExecSpace::name()
  std::function<void(const PeerArgs&)> run;  // the whole backward pass; any size ≥ 0
  // The bias gradient alone, for its GB/s; empty where the peer fuses it or
  // computes none.
  std::function<void(const PeerArgs&)> bias_only;
  std::string bias_kernel;  // what bias_only runs; "fused": inside run; empty: no dbias
  bool computes_bias = true;  // false: dbias is left alone and not checked (GEMMs only)
  bool int_sizes = false;     // its library takes M, C, OC as int (BLAS)
  std::string description;    // a note under the table
};

// peers_host.cpp: seed-cpu-loops, openblas (Serial and OpenMP backends).
std::vector<Peer> host_peers();

// The peers that run on a backend, in table order.
std::vector<Peer> peers_for(const std::string& backend);

// The peer that a backend's "vs" column compares with: openblas on the host,
// cublas-sgemm (the two GEMMs alone) on Cuda.
std::string comparison_peer(const std::string& backend);

}  // namespace llmk::perf::matmul_backward
