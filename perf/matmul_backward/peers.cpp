#include "peers.hpp"

#include "../harness/peer_list.hpp"

#include <climits>

namespace llmk::perf::matmul_backward {

#ifdef LLMK_PERF_CUDA_PEERS
// peers_cuda.cpp (compiled only with CUDA): cublas-seed, cublas-sgemm,
// cublas-tf32 and llmc-style, on "Cuda".
std::vector<Peer> cuda_peers();
#endif

std::string Peer::why_not(bool with_gelu, bool overwrite_dinp, index_t M, index_t C,
                          index_t OC) const {
  if (!unavailable.empty()) return unavailable;
  if (with_gelu && gelu.empty()) return "no GELU backward";
  if (with_gelu && gelu_needs_overwrite && !overwrite_dinp)
    return "its GELU backward only overwrites dinp (--overwrite-dinp)";
  if (int_sizes && (M > INT_MAX || C > INT_MAX || OC > INT_MAX))
    return "its library takes M, C and OC as int";
  return {};
}

std::vector<Peer> peers_for(const std::string& backend) {
  std::vector<Peer> all = host_peers();
#ifdef LLMK_PERF_CUDA_PEERS
  for (Peer& p : cuda_peers()) all.push_back(std::move(p));
#endif
  return peers_on(std::move(all), backend);
}

}  // namespace llmk::perf::matmul_backward
