#include "peers.hpp"

#include <algorithm>

namespace llmk::perf::gelu_backward {

#ifdef LLMK_PERF_CUDA_PEERS
// peers_llmc_cuda.cpp (compiled only with CUDA): llmc-style, on "Cuda".
std::vector<Peer> llmc_peers();
#endif

std::vector<Peer> peers_for(const std::string& backend) {
  std::vector<Peer> all;
#ifdef LLMK_PERF_CUDA_PEERS
  for (Peer& p : llmc_peers()) all.push_back(std::move(p));
#endif
  std::vector<Peer> here;
  for (Peer& p : all)
    if (std::find(p.backends.begin(), p.backends.end(), backend) != p.backends.end())
      here.push_back(std::move(p));
  return here;
}

std::string comparison_peer(const std::string& backend, const std::string& precision) {
  for (const Peer& p : peers_for(backend))
    if (p.comparison &&
        std::find(p.precisions.begin(), p.precisions.end(), precision) != p.precisions.end())
      return p.name;
  return {};
}

}  // namespace llmk::perf::gelu_backward
