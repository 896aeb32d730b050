#include "peers.hpp"

namespace llmk::perf::classifier_backward {

#ifdef LLMK_PERF_CUDA_PEERS
// peers_llmc_cuda.cpp (compiled only with CUDA): llmc-style, on "Cuda".
std::vector<Peer> llmc_peers();
#endif

std::vector<Peer> peers_for(const std::string& backend) {
#ifdef LLMK_PERF_CUDA_PEERS
  return peers_on(llmc_peers(), backend);
#else
  (void)backend;
  return {};
#endif
}

}  // namespace llmk::perf::classifier_backward
