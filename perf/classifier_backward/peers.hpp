// The classifier backward's peers (codes other than llmk's, timed in the same
// run on the same logits, validated like llmk's implementations): on Cuda
// peer:llmc-style (peers_llmc_cuda.cpp). peer:copy is the harness's
// (harness/copy_peer.hpp). A peer's row is "peer:<name>".
#pragma once

#include "../harness/peer_list.hpp"

#include <llmk/types.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace llmk::perf::classifier_backward {

// Buffers in the backend's memory, row-major as llm.c's: logits M × Vp
// (float or bf16 by `precision`), overwritten by dlogits; losses, targets M.
struct PeerArgs {
  void* logits;
  float* losses;
  const std::int32_t* targets;
  float dloss;  // every position's (llm.c: 1/(B·T))
  index_t M, V, Vp;
  std::string precision;
};

using Peer = perf::Peer<PeerArgs>;

// The peers that run on a backend, in table order (peer:copy aside).
std::vector<Peer> peers_for(const std::string& backend);

}  // namespace llmk::perf::classifier_backward
