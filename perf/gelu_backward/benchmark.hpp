// The GELU backward in llmk-perf (`llmk-perf gelu_backward`): its options
// (B, T, C: N = B·T·C elements, the implementations and precisions to time,
// dinp overwritten) and its run: per precision, one row per llmk
// implementation, then the peers (peers.hpp): peer:copy, a device copy of as
// many bytes as the call moves (the ceiling every row's "% copy" compares
// with), on Cuda peer:llmc-style, llm.c's kernel's idea. Each that computes
// something is validated against llmk_gelu_backward_reference before it is
// timed. Memory-bound: rows report GB/s (Shape::bytes: dout and inp read, dinp
// written, and read when accumulated).
#pragma once

#include "../harness/cli.hpp"
#include "../harness/implementations.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

namespace llmk::perf::gelu_backward {

struct Options {
  // GPT-2 124M's MLP activations (4C = 3072) at llm.c's training batch.
  std::int64_t B = 8, T = 1024, C = 3072;
  std::string impls = "all";        // "all", or a comma list of implementation names / "auto"
  std::string precisions = "fp32";  // "all", or a comma list: fp32, bf16
  bool overwrite_dinp = false;      // Update::overwrite on dinp (llm.c's kernel overwrites)
};

const Implementations& implementations();
void add_options(CLI::App& app, Options& opt);
// On the backend harness.backend; Kokkos must be initialized. 0, or 1 when
// a row failed its check.
int run(const perf::Options& harness, const Options& opt);

}  // namespace llmk::perf::gelu_backward
