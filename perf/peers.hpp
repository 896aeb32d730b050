// Peers: non-llmk codes timed in the same run on the same inputs, validated
// like llmk's implementations. A small registry: each peer names the Kokkos
// backends it runs on (its pointers are in that backend's memory space).
#pragma once

#include <llmk/types.hpp>

#include <functional>
#include <string>
#include <vector>

namespace llmk::perf {

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
  std::string name;
  std::vector<std::string> backends;  // Kokkos backend names, as ExecSpace::name()
  std::function<void(const PeerArgs&)> run;  // the whole backward pass
  // The bias gradient alone, for its GB/s; empty where the peer fuses it.
  std::function<void(const PeerArgs&)> bias_only;
  std::string bias_kernel;  // what bias_only runs, for the JSON
  bool computes_bias = true;  // false: dbias is left alone and not checked (GEMMs only)
};

// peers_host.cpp: seed-cpu-loops, openblas (Serial and OpenMP backends).
std::vector<Peer> host_peers();

// The peers that run on a backend, in table order.
std::vector<Peer> peers_for(const std::string& backend);

// The peer that a backend's "vs" column compares with: openblas on the host,
// cublas on Cuda (once peers_cuda.cpp exists).
std::string reference_peer(const std::string& backend);

}  // namespace llmk::perf
