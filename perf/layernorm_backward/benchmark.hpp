// The layernorm backward in llmk-perf (`llmk-perf layernorm_backward`): its
// options (the problem's sizes, the implementations and precisions to time,
// dinp overwritten) and its run: per precision, one row per llmk
// implementation that declares it, in the order of
// llmk::impls<llmk::LayernormBackward>(), then the peers (peers.hpp): peer:copy, a
// device copy moving as many bytes as the operation, the bandwidth ceiling
// every row's "% copy" compares with; on Cuda peer:llmc-style, llm.c's
// algorithm. All on the same inputs, each that computes something validated
// against the float64 reference of llmk_layernorm_backward_reference before it
// is timed. A memory-bound operation: rows report GB/s (the bytes of the
// reference's Shape::bytes, the least a call must move), not GFLOP/s.
#pragma once

#include "../harness/cli.hpp"
#include "../harness/implementations.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

namespace llmk::perf::layernorm_backward {

struct Options {
  // GPT-2 124M's layernorms at llm.c's training batch.
  std::int64_t B = 8, T = 1024, C = 768;
  std::string impls = "all";        // "all", or a comma list of implementation names / "auto"
  std::string precisions = "fp32";  // "all", or a comma list: fp32, bf16, bf16-fp32grad
  bool overwrite_dinp = false;      // Update::overwrite on dinp (default +=, as llm.c's residual stream)
};

// llmk::impls<llmk::LayernormBackward>() and where each runs, for --impl.
const Implementations& implementations();

// --B --T --C (zero sizes are a valid no-op), --impl, whose help lists the
// implementations of this build per backend (from the registry),
// --precision, --overwrite-dinp.
void add_options(CLI::App& app, Options& opt);

// On the backend harness.backend; Kokkos must be initialized. Returns the
// exit code: 0, or 1 when a row failed its check. Throws
// std::invalid_argument for an --impl not available on the backend.
int run(const perf::Options& harness, const Options& opt);

}  // namespace llmk::perf::layernorm_backward
