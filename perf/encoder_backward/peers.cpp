#include "peers.hpp"

#include "../harness/peer_list.hpp"

namespace llmk::perf::encoder_backward {

#ifdef LLMK_PERF_CUDA_PEERS
// peers_llmc_cuda.cpp (compiled only with CUDA): llmc-atomics, on "Cuda".
std::vector<Peer> llmc_peers();
#endif

std::vector<Peer> peers_for(const std::string& backend) {
  std::vector<Peer> all;
#ifdef LLMK_PERF_CUDA_PEERS
  all = llmc_peers();
#endif
  return peers_on(std::move(all), backend);
}

std::string comparison_peer(const std::string& backend, const std::string& precision) {
  return comparison_among(peers_for(backend), precision);
}

}  // namespace llmk::perf::encoder_backward
