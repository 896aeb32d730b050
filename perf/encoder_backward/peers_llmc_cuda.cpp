// llmc-atomics: the encoder backward as llm.c's simple GPU version computes
// it (the idea of its fp32 encoder_backward kernel of float atomics), written
// here from the algorithm — independent of llmk and not copied from llm.c: a
// thread per element (b, t, c) of dout, which adds it to dwte[tokens[b, t], c]
// and to dwpe[t, c] with atomicAdd, blocks of 256 threads. The order of the
// additions is the hardware's: NOT deterministic (run to run the sums differ
// in their last bits), so its check is the reference's tolerance, never
// bitwise equality. Overwritten gradients are zeroed first (cudaMemsetAsync
// on the instance's stream), as a trainer zeroes its gradients. fp32, and
// bf16-fp32grad (dout bf16, widened; float atomics): atomics into bf16
// gradients would round at each of a bucket's additions, which llm.c does not
// do either (its bf16 version is the deterministic, sorted one).
#include "../harness/llmc_cuda.hpp"
#include "peers.hpp"

#include <Kokkos_Core.hpp>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace llmk::perf::encoder_backward {
namespace {

constexpr int kThreads = 256;

using llmc::widen;

template <class In>
__global__ void __launch_bounds__(kThreads)
    encoder_backward_atomics(float* dwte, float* dwpe, const In* dout, const int* tokens,
                             index_t T, index_t C, index_t N) {
  const index_t i = index_t(blockIdx.x) * kThreads + threadIdx.x;
  if (i >= N) return;
  const index_t position = i / C, c = i % C;  // position = b·T + t
  const index_t t = position % T;
  const float d = widen(dout[i]);
  atomicAdd(dwte + index_t(tokens[position]) * C + c, d);
  atomicAdd(dwpe + t * C + c, d);
}

void check(cudaError_t err, const char* what) { llmc::check(err, "encoder llmc-atomics", what); }

template <class In>
void run_typed(const PeerArgs& a) {
  const cudaStream_t stream = Kokkos::Cuda().cuda_stream();
  float* dwte = static_cast<float*>(a.dwte);
  float* dwpe = static_cast<float*>(a.dwpe);
  if (a.overwrite) {
    check(cudaMemsetAsync(dwte, 0, std::size_t(a.V * a.C) * sizeof(float), stream), "dwte = 0");
    check(cudaMemsetAsync(dwpe, 0, std::size_t(a.T * a.C) * sizeof(float), stream), "dwpe = 0");
  }
  const index_t N = a.B * a.T * a.C;
  if (N == 0) return;
  const unsigned blocks = unsigned((N + kThreads - 1) / kThreads);
  encoder_backward_atomics<In><<<blocks, kThreads, 0, stream>>>(
      dwte, dwpe, static_cast<const In*>(a.dout), a.tokens, a.T, a.C, N);
  check(cudaGetLastError(), "kernel launch");
}

void llmc_atomics(const PeerArgs& a) {
  if (a.precision == "fp32") run_typed<float>(a);
  else if (a.precision == "bf16-fp32grad") run_typed<__nv_bfloat16>(a);
  else throw std::invalid_argument("llmk-perf (encoder llmc-atomics): no precision " + a.precision);
}

}  // namespace

std::vector<Peer> llmc_peers() {
  Peer p;
  p.name = "llmc-atomics";
  p.backends = {"Cuda"};
  p.precisions = {"fp32", "bf16-fp32grad"};
  p.run = llmc_atomics;
  p.comparison = true;
  p.description =
      "llm.c's simple fp32 algorithm (its atomics encoder_backward's idea, written "
      "independently): a thread per element of dout, atomicAdd into dwte[token] and dwpe[t]; "
      "NOT deterministic (float atomics in the hardware's order): checked within the "
      "reference's tolerance, not bitwise";
  return {p};
}

}  // namespace llmk::perf::encoder_backward
