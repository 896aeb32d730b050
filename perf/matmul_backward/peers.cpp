#include "peers.hpp"

#include <algorithm>

namespace llmk::perf::matmul_backward {

#ifdef LLMK_PERF_CUDA_PEERS
// peers_cuda.cpp (compiled only with CUDA): cublas-seed, cublas-sgemm,
// cublas-tf32 and llmc-style, on "Cuda".
std::vector<Peer> cuda_peers();
#endif

std::string Peer::why_not(bool with_gelu, bool overwrite_dinp) const {
  if (!unavailable.empty()) return unavailable;
  if (with_gelu && gelu.empty()) return "no GELU backward";
  if (with_gelu && gelu_needs_overwrite && !overwrite_dinp)
    return "its GELU backward only overwrites dinp (--overwrite-dinp)";
  return {};
}

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

std::string comparison_peer(const std::string& backend, const std::string& precision,
                            bool with_gelu, bool overwrite_dinp) {
  for (const Peer& p : peers_for(backend)) {
    const bool runs = std::find(p.precisions.begin(), p.precisions.end(), precision) !=
                      p.precisions.end();
    if (p.comparison && runs && p.why_not(with_gelu, overwrite_dinp).empty()) return p.name;
  }
  return {};
}

}  // namespace llmk::perf::matmul_backward
