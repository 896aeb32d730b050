// The matmul backward in llmk-perf: its options (the problem's sizes, the
// implementations and precisions to time, GELU, dinp overwritten) and its
// run: per precision, one row per llmk implementation that declares it, in
// the order of llmk::impls<llmk::MatmulBackward>(), then the peers (peers.hpp) that
// run it, all on the same inputs, each validated against the float64
// reference of llmk_matmul_backward_reference before it is timed. One
// precision's buffers are freed before the next one's are made.
#pragma once

#include "../harness/cli.hpp"
#include "../harness/implementations.hpp"

#include <ops/matmul_backward/reference/problem.hpp>

#include <CLI/CLI.hpp>

#include <string>

namespace llmk::perf::matmul_backward {

struct Options {
  reference::Shape shape = reference::seed_shape();  // B=8 T=1024 C=768 OC=3072
  std::string impls = "all";  // "all", or a comma list of implementation names / "auto"
  std::string precisions = "fp32";  // "all", or a comma list: fp32, tf32, bf16, bf16-fp32grad
  bool gelu = false;                // pass pre_gelu: the GELU backward fused into dinp
  bool overwrite_dinp = false;      // Update::overwrite on dinp (llm.c's training)
};

// llmk::impls<llmk::MatmulBackward>() and where each runs, for --impl.
const Implementations& implementations();

// --B --T --C --OC (zero sizes are a valid no-op), --impl, whose help lists
// the implementations of this build per backend (from the registry),
// --precision, --gelu and --overwrite-dinp.
void add_options(CLI::App& app, Options& opt);

// On the backend harness.backend; Kokkos must be initialized. Returns the
// exit code: 0, or 1 when a row failed its check. Throws
// std::invalid_argument for an --impl not available on the backend.
int run(const perf::Options& harness, const Options& opt);

}  // namespace llmk::perf::matmul_backward
