// The attention backward's peers: codes other than llmk's, timed in the same
// run on the same inputs and validated like llmk's implementations. Each
// names the Kokkos backends and precisions it runs in (its pointers are in
// that backend's memory space, of that precision's element types). In the
// table a peer's row is "peer:<name>". peer:copy is the harness's
// (harness/copy_peer.hpp) and runs on every backend.
#pragma once

#include "../harness/peer_list.hpp"

#include <llmk/types.hpp>

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

using Peer = perf::Peer<PeerArgs>;

// The peers that run on a backend, in table order (peer:copy aside).
std::vector<Peer> peers_for(const std::string& backend);

}  // namespace llmk::perf::attention_backward
