#include "peers.hpp"

#include <algorithm>

namespace llmk::perf::matmul_backward {

#ifdef LLMK_PERF_CUDA_PEERS
// peers_cuda.cpp (compiled only with CUDA): "cublas-seed" (cuBLAS sgemm + the
// seed's shared-memory bias kernel) and "cublas-sgemm" (cuBLAS alone), on "Cuda".
std::vector<Peer> cuda_peers();
#endif

std::vector<Peer> peers_for(const std::string& backend) {
  std::vector<Peer> all = host_peers();
#ifdef LLMK_PERF_CUDA_PEERS
  for (Peer& p : cuda_peers()) all.push_back(std::move(p));
#endif
  std::vector<Peer> here;
  for (Peer& p : all)
    if (std::find(p.backends.begin(), p.backends.end(), backend) != p.backends.end())
      here.push_back(std::move(p));
  return here;
}

std::string comparison_peer(const std::string& backend) {
  return backend == "Cuda" ? "cublas-sgemm" : "openblas";
}

}  // namespace llmk::perf::matmul_backward
