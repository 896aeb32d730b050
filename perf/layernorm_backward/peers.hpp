// The layernorm backward's peers: codes other than llmk's, timed in the same
// run on the same inputs and validated like llmk's implementations. Each
// names the Kokkos backends and precisions it runs in (its pointers are in
// that backend's memory space, of that precision's element types). In the
// table a peer's row is "peer:<name>". peer:copy, the bandwidth ceiling, is
// the harness's (harness/copy_peer.hpp) and runs on every backend.
#pragma once

#include "../harness/peer_list.hpp"

#include <llmk/types.hpp>

#include <string>
#include <vector>

namespace llmk::perf::layernorm_backward {

// Row-major buffers in the backend's memory space, as llm.c passes them.
// Element types by `precision`:
//   "fp32"           everything float
//   "bf16"           dout, inp, weight, dinp, dweight, dbias bf16 (__nv_bfloat16 / llmk::bf16 bits)
//   "bf16-fp32grad"  dout, inp, weight, dinp bf16; dweight, dbias float
// mean and rstd are float in all three.
struct PeerArgs {
  void* dinp;     // M × C: accumulated, or overwritten when overwrite_dinp
  void* dweight;  // C, accumulated
  void* dbias;    // C, accumulated; nullptr: no bias gradient
  const void* dout;    // M × C
  const void* inp;     // M × C
  const void* weight;  // C
  const float* mean;   // M
  const float* rstd;   // M
  index_t M, C;
  std::string precision;
  bool overwrite_dinp = false;  // dinp = instead of +=, without reading it
};

using Peer = perf::Peer<PeerArgs>;

#ifdef LLMK_PERF_CUDA_PEERS
std::vector<Peer> llmc_peers();  // peers_llmc_cuda.cpp: on Cuda
#else
inline std::vector<Peer> llmc_peers() { return {}; }  // no CUDA, none
#endif

}  // namespace llmk::perf::layernorm_backward
