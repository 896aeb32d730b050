// The attention backward's peers: codes other than llmk's, timed in the same
// run on the same inputs and validated like llmk's implementations. Each
// names the Kokkos backends and precisions it runs in (its pointers are in
// that backend's memory space, of that precision's element types). In the
// table a peer's row is "peer:<name>". peer:copy is the harness's
// (harness/copy_peer.hpp) and runs on every backend.
#pragma once

#include <llmk/types.hpp>

#include <functional>
#include <string>
#include <vector>

namespace llmk::perf::attention_backward {

// Row-major buffers in the backend's memory space, as llm.c passes them
// (llmk/attention_backward.hpp): dqkv, qkv (B·T)×3C, dout (B·T)×C, att
// (B·NH·T)×T, of the precision's element type ("fp32": float; "bf16").
struct PeerArgs {
  void* dqkv;  // overwritten, or accumulated when `accumulate`
  const void* dout;
  const void* qkv;
  const void* att;
  index_t B, T, C, NH;
  std::string precision;
  bool accumulate = false;
  int threads = 1;  // host threads a host peer may use
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

}  // namespace llmk::perf::attention_backward
