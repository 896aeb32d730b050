// The layer-norm forward's peers: on Cuda peer:llmc-style
// (peers_llmc_cuda.cpp); peer:copy is the harness's.
#pragma once

#include "../harness/peer_list.hpp"

#include <llmk/types.hpp>

#include <string>
#include <vector>

namespace llmk::perf::layernorm_forward {

// In the backend's memory: out, inp M × C and weight, bias (nullptr: none) C
// of float ("fp32") or bf16 bits ("bf16"); mean, rstd M floats.
struct PeerArgs {
  void* out;
  float* mean;
  float* rstd;
  const void* inp;
  const void* weight;
  const void* bias;
  index_t M, C;
  std::string precision;
};
using Peer = perf::Peer<PeerArgs>;

#ifdef LLMK_PERF_CUDA_PEERS
std::vector<Peer> llmc_peers();  // peers_llmc_cuda.cpp: on Cuda
#else
inline std::vector<Peer> llmc_peers() { return {}; }  // no CUDA, none
#endif

}  // namespace llmk::perf::layernorm_forward
