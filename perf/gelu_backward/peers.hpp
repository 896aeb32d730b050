// The GELU backward's peers (see layernorm_backward/peers.hpp for the model):
// on Cuda peer:llmc-style (peers_llmc_cuda.cpp); peer:copy is the harness's.
#pragma once

#include <llmk/types.hpp>

#include <functional>
#include <string>
#include <vector>

namespace llmk::perf::gelu_backward {

// N elements each in the backend's memory space: float ("fp32") or bf16 bits
// ("bf16").
struct PeerArgs {
  void* dinp;  // accumulated, or overwritten when overwrite_dinp
  const void* dout;
  const void* inp;
  index_t N;
  std::string precision;
  bool overwrite_dinp = false;
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

}  // namespace llmk::perf::gelu_backward
