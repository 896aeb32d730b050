// The layernorm backward's peers: codes other than llmk's, timed in the same
// run on the same inputs and validated like llmk's implementations. Each
// names the Kokkos backends and precisions it runs in (its pointers are in
// that backend's memory space, of that precision's element types). In the
// table a peer's row is "peer:<name>". peer:copy, the bandwidth ceiling, is
// the harness's (harness/copy_peer.hpp) and runs on every backend.
#pragma once

#include <llmk/types.hpp>

#include <functional>
#include <string>
#include <vector>

namespace llmk::perf::layernorm_backward {

// Row-major buffers in the backend's memory space, as llm.c passes them.
// Element types by `precision`:
//   "fp32"           everything float
//   "bf16"           dout, inp, weight, dinp, dweight, dbias bf16 (__nv_bfloat16 / llmk::bf16 bits)
//   "bf16-fp32grad"  dout, inp, weight, dinp bf16; dweight, dbias float
// mean and rstd are float in all three.
struct PeerArgs {
  void* dinp;     // M × C: accumulated, or overwritten when overwrite_dinp
  void* dweight;  // C, accumulated
  void* dbias;    // C, accumulated; nullptr: no bias gradient
  const void* dout;    // M × C
  const void* inp;     // M × C
  const void* weight;  // C
  const float* mean;   // M
  const float* rstd;   // M
  index_t M, C;
  std::string precision;
  bool overwrite_dinp = false;  // dinp = instead of +=, without reading it
};

struct Peer {
  std::string name;                     // the row is "peer:<name>"
  std::vector<std::string> backends;    // Kokkos backend names, as ExecSpace::name()
  std::vector<std::string> precisions;  // those it runs (PeerArgs::precision)
  std::function<void(const PeerArgs&)> run;  // the whole backward pass; any size ≥ 0
  bool comparison = false;  // what the "vs" column of its precisions divides by
  std::string description;  // a note under the table
};

// The peers that run on a backend, in table order (peer:copy aside).
std::vector<Peer> peers_for(const std::string& backend);

// The peer that the "vs" column compares a precision's rows with, or empty.
std::string comparison_peer(const std::string& backend, const std::string& precision);

}  // namespace llmk::perf::layernorm_backward
