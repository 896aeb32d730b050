// The GELU forward's peers: on Cuda peer:llmc-style (peers_llmc_cuda.cpp);
// peer:copy is the harness's.
#pragma once

#include "../harness/peer_list.hpp"

#include <llmk/types.hpp>

#include <string>
#include <vector>

namespace llmk::perf::gelu_forward {

// N elements each in the backend's memory space: float ("fp32") or bf16 bits ("bf16").
struct PeerArgs {
  void* out;  // overwritten, or accumulated unless overwrite_out
  const void* inp;
  index_t N;
  std::string precision;
  bool overwrite_out = true;
};
using Peer = perf::Peer<PeerArgs>;

#ifdef LLMK_PERF_CUDA_PEERS
std::vector<Peer> llmc_peers();  // peers_llmc_cuda.cpp: on Cuda
#else
inline std::vector<Peer> llmc_peers() { return {}; }  // no CUDA, none
#endif

}  // namespace llmk::perf::gelu_forward
