// The attention backward in llmk-perf (`llmk-perf attention_backward`): its
// options (the problem's sizes, the implementations and precisions to time,
// dqkv accumulated) and its run: per precision, one row per llmk
// implementation that declares it, in the order of
// llmk::impls<llmk::AttentionBackward>(), then the peers (peers.hpp): peer:copy, a
// device copy moving as many bytes as a call must, and on the host
// peer:openblas (fp32: OpenBLAS sgemm per (b, h) around the same softmax
// backward). All on the same inputs, each validated against the float64
// reference of llmk_attention_backward_reference before it is timed.
// GFLOP/s counts the four products on the causal half only (Shape::flops:
// 4·B·C·T·(T+1)), whatever an implementation computes; GB/s the bytes a call
// must move (dout, qkv and att's causal half read, dqkv written, and read
// when accumulated).
#pragma once

#include "../harness/cli.hpp"
#include "../harness/implementations.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

namespace llmk::perf::attention_backward {

struct Options {
  // GPT-2 124M's attention at llm.c's training batch.
  std::int64_t B = 8, T = 1024, C = 768, NH = 12;
  std::string impls = "all";        // "all", or a comma list of implementation names / "auto"
  std::string precisions = "fp32";  // "all", or a comma list: fp32, bf16
  bool overwrite_dqkv = false;      // Update::overwrite on dqkv (llm.c's; default +=)
};

// llmk::impls<llmk::AttentionBackward>() and where each runs, for --impl.
const Implementations& implementations();

// --B --T --C --NH (zero B, T, C are a valid no-op), --impl, --precision,
// --overwrite-dqkv.
void add_options(CLI::App& app, Options& opt);

// On the backend harness.backend; Kokkos must be initialized. Returns the
// exit code: 0, or 1 when a row failed its check. Throws
// std::invalid_argument for an --impl not available on the backend or bad
// sizes (C not a multiple of NH).
int run(const perf::Options& harness, const Options& opt);

}  // namespace llmk::perf::attention_backward
