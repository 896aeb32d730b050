// Peers: codes other than llmk's, timed in the same run on the same inputs and
// validated like llmk's implementations. Each names the Kokkos backends and the
// precisions it runs in (its pointers are in that backend's memory space, of
// that precision's element types). In the table a peer's row is
// "peer:<name>", never the name of an implementation.
#pragma once

#include <llmk/types.hpp>

#include <functional>
#include <string>
#include <vector>

namespace llmk::perf::matmul_backward {

// Row-major buffers in the backend's memory space, as llm.c passes them. Their
// element types follow `precision`:
//   "fp32", "tf32"   everything float (tf32: the products may use TF32)
//   "bf16"           everything bf16 (__nv_bfloat16 / llmk::bf16 bits)
//   "bf16-fp32grad"  dout, inp, weight, pre_gelu and dinp bf16; dweight, dbias float
struct PeerArgs {
  void* dinp;     // M × C: accumulated, or overwritten when overwrite_dinp
  void* dweight;  // OC × C, accumulated
  void* dbias;    // OC, accumulated
  const void* dout;      // M × OC
  const void* inp;       // M × C
  const void* weight;    // OC × C
  const void* pre_gelu;  // M × C, or nullptr: dinp gets no GELU backward
  index_t M, C, OC;
  int threads;  // host threads a host peer may use
  std::string precision;
  bool overwrite_dinp = false;  // dinp = instead of +=, without reading it
};

struct Peer {
  std::string name;                        // the row is "peer:<name>"
  std::vector<std::string> backends;       // Kokkos backend names, as ExecSpace::name()
  std::vector<std::string> precisions;     // those it runs (PeerArgs::precision)
  std::function<void(const PeerArgs&)> run;  // the whole backward pass; any size ≥ 0
  // The bias gradient alone, for its GB/s; empty where the peer fuses it or
  // computes none.
  std::function<void(const PeerArgs&)> bias_only;
  std::string bias_kernel;  // what bias_only runs; "fused": inside run; empty: no dbias
  bool computes_bias = true;  // false: dbias is left alone and not checked (GEMMs only)
  bool int_sizes = false;     // its library takes M, C, OC as int (BLAS)
  // The GELU backward (pre_gelu): "" not run (the row is skipped with --gelu),
  // "fused" into the dinp GEMM, "separate" pass.
  std::string gelu;
  bool gelu_needs_overwrite = false;  // its GELU only overwrites dinp (a cuBLASLt epilogue)
  bool comparison = false;  // a candidate for the "vs" column of its precisions
  std::string unavailable;  // non-empty: why it cannot run here (a missing library symbol)
  std::string description;  // a note under the table

  // Why the peer cannot run with these settings and sizes, or empty.
  std::string why_not(bool with_gelu, bool overwrite_dinp, index_t M, index_t C, index_t OC) const;
};

// peers_host.cpp: seed-cpu-loops, openblas, openblas-sbgemm (Serial and OpenMP).
std::vector<Peer> host_peers();

// The peers that run on a backend, in table order (the "vs" column compares a
// precision's rows with the first comparison candidate that runs it with
// these settings: openblas on the host, cublas-sgemm on Cuda in fp32, ...).
std::vector<Peer> peers_for(const std::string& backend);

}  // namespace llmk::perf::matmul_backward
