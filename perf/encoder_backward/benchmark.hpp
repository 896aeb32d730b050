// The encoder backward in llmk-perf (`llmk-perf encoder_backward`): its
// options (B, T, C, V, the implementations and precisions to time, dwte and
// dwpe overwritten, the tokens' distribution) and its run: per precision,
// one row per llmk implementation, then the peers (peers.hpp): peer:copy, a
// device copy of as many bytes as the call moves (the ceiling every row's
// "% copy" compares with), on Cuda peer:llmc-atomics, llm.c's simple kernel
// of float atomics (not deterministic). Each that computes something is
// validated against llmk_encoder_backward_reference before it is timed.
// Memory-bound: rows report GB/s (Shape::bytes: dout and the tokens read,
// dwpe and the touched rows of dwte written, and read when accumulated).
#pragma once

#include "../harness/cli.hpp"
#include "../harness/implementations.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

namespace llmk::perf::encoder_backward {

struct Options {
  // GPT-2 124M (C 768, V 50257) at llm.c's training batch.
  std::int64_t B = 8, T = 1024, C = 768, V = 50257;
  std::string impls = "all";        // "all", or a comma list of implementation names / "auto"
  std::string precisions = "fp32";  // "all", or a comma list: fp32, bf16, bf16-fp32grad
  bool overwrite = false;  // Update::overwrite on dwte and dwpe (default +=)
  // Tokens drawn P(v) ∝ 1/(v + 1), as text's are (and the PyTorch peer's);
  // default uniform in [0, V). Both from a fixed seed.
  bool zipf = false;
  bool no_token_check = false;  // options.check_tokens = false
};

const Implementations& implementations();
void add_options(CLI::App& app, Options& opt);
// On the backend harness.backend; Kokkos must be initialized. 0, or 1 when
// a row failed its check.
int run(const perf::Options& harness, const Options& opt);

}  // namespace llmk::perf::encoder_backward
