#include "peers.hpp"

#include <algorithm>

namespace llmk::perf::classifier_backward {

#ifdef LLMK_PERF_CUDA_PEERS
// peers_llmc_cuda.cpp (compiled only with CUDA): llmc-style, on "Cuda".
std::vector<Peer> llmc_peers();
#endif

std::vector<Peer> peers_for(const std::string& backend) {
  std::vector<Peer> here;
#ifdef LLMK_PERF_CUDA_PEERS
  for (Peer& p : llmc_peers())
    if (std::count(p.backends.begin(), p.backends.end(), backend)) here.push_back(std::move(p));
#else
  (void)backend;
#endif
  return here;
}

}  // namespace llmk::perf::classifier_backward
