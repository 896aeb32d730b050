// The encoder backward's peers (see layernorm_backward/peers.hpp for the
// model): on Cuda peer:llmc-atomics (peers_llmc_cuda.cpp); peer:copy is the
// harness's.
#pragma once

#include <llmk/types.hpp>

#include <functional>
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

struct Peer {
  std::string name;
  std::vector<std::string> backends;
  std::vector<std::string> precisions;
  std::function<void(const PeerArgs&)> run;
  bool comparison = false;
  std::string description;
};

std::vector<Peer> peers_for(const std::string& backend);
std::string comparison_peer(const std::string& backend, const std::string& precision);

}  // namespace llmk::perf::encoder_backward
