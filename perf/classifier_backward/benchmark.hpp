// The classifier backward in llmk-perf (`llmk-perf classifier_backward`):
// its options (the sizes, the implementations and precisions to time, a
// per-position dloss) and its run: per precision, one row per llmk
// implementation that declares it, then the peers (peers.hpp): peer:copy, a
// device copy moving as many bytes as one read and one write of the logits,
// the ceiling every row's "% copy" compares with; on Cuda peer:llmc-style,
// llm.c's fused_classifier algorithm. Every row works in place on the same
// logits, as llm.c trains, checked against the float64 reference of
// llmk_classifier_backward_reference before it is timed (the logits are
// uploaded again before each check). A memory-bound operation: rows report
// GB/s (Shape::bytes, the least a call moves).
#pragma once

#include "../harness/cli.hpp"
#include "../harness/implementations.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

namespace llmk::perf::classifier_backward {

struct Options {
  // GPT-2's classifier at llm.c's training batch.
  std::int64_t B = 8, T = 1024, V = 50257, Vp = 50304;
  std::string impls = "all";        // "all", or a comma list of implementation names / "auto"
  std::string precisions = "fp32";  // "all", or a comma list: fp32, bf16
  bool per_position = false;        // a dloss array rather than llm.c's 1/(B·T)
  bool no_target_check = false;     // options.check_targets = false
};

// llmk::impls<llmk::ClassifierBackward>() and where each runs, for --impl.
const Implementations& implementations();

// --B --T --V --Vp, --impl, --precision, --dloss-per-position, --no-target-check.
void add_options(CLI::App& app, Options& opt);

// On the backend harness.backend; Kokkos must be initialized. Returns the
// exit code: 0, or 1 when a row failed its check.
int run(const perf::Options& harness, const Options& opt);

}  // namespace llmk::perf::classifier_backward
