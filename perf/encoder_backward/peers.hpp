// The encoder backward's peers (see layernorm_backward/peers.hpp for the
// model): on Cuda peer:llmc-atomics (peers_llmc_cuda.cpp); peer:copy is the
// harness's.
#pragma once

#include "../harness/peer_list.hpp"

#include <llmk/types.hpp>

#include <string>
#include <vector>

namespace llmk::perf::encoder_backward {

// Buffers in the backend's memory, row-major as llm.c's: dwte V × C, dwpe
// T × C (float, or bf16 bits in "bf16"), dout B × T × C (float, or bf16 bits
// in "bf16" and "bf16-fp32grad"), tokens B × T.
struct PeerArgs {
  void* dwte;  // accumulated, or overwritten when `overwrite`
  void* dwpe;
  const void* dout;
  const int* tokens;
  index_t B, T, C, V;
  std::string precision;
  bool overwrite = false;
};

using Peer = perf::Peer<PeerArgs>;

#ifdef LLMK_PERF_CUDA_PEERS
std::vector<Peer> llmc_peers();  // peers_llmc_cuda.cpp: on Cuda
#else
inline std::vector<Peer> llmc_peers() { return {}; }  // no CUDA, none
#endif

}  // namespace llmk::perf::encoder_backward
