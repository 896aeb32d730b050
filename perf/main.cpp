// llmk-perf: validates, then times, llmk's implementations of an operation
// and its peers (other codes doing the same work) on the same inputs. One
// driver, the operation as a subcommand:
//   llmk-perf matmul_backward [options]      perf/matmul_backward/
//   llmk-perf layernorm_backward [options]   perf/layernorm_backward/
//   llmk-perf attention_backward [options]   perf/attention_backward/
//   llmk-perf classifier_backward [options]  perf/classifier_backward/
//   llmk-perf gelu_backward [options]        perf/gelu_backward/
//   llmk-perf encoder_backward [options]     perf/encoder_backward/
//   llmk-perf [options]                      matmul_backward, as before subcommands
// The harness (perf/harness/: timing, probes, the device timer, the table and
// the JSON, the common options) knows nothing of the operations. Its options
// (--backend, --json, --import, ...) belong to llmk-perf itself: they may come
// before the subcommand or after it (the subcommands fall through to them).
// Progress on stderr, the table on stdout, optionally a JSON file (--json) to
// which --import adds records timed elsewhere (perf/torch_baseline.py).
// Exits 1 when a row failed its check, 2 on bad arguments.
#include "harness/cli.hpp"
#include "attention_backward/benchmark.hpp"
#include "classifier_backward/benchmark.hpp"
#include "encoder_backward/benchmark.hpp"
#include "gelu_backward/benchmark.hpp"
#include "harness/kokkos_compat.hpp"
#include "layernorm_backward/benchmark.hpp"
#include "matmul_backward/benchmark.hpp"

#include <CLI/CLI.hpp>

#include <functional>
#include <iostream>
#include <memory>
#include <stdexcept>

namespace {

// The options given to `app` itself (not to its subcommands), by name.
std::vector<std::string> given(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* o : app.get_options())
    if (o->count() > 0) names.push_back(o->get_name());
  return names;
}

}  // namespace

int main(int argc, char** argv) {
  llmk::perf::Options harness;
  llmk::perf::matmul_backward::Options matmul;
  llmk::perf::layernorm_backward::Options layernorm;
  llmk::perf::attention_backward::Options attention;
  llmk::perf::classifier_backward::Options classifier;
  llmk::perf::gelu_backward::Options gelu;
  llmk::perf::encoder_backward::Options encoder;

  CLI::App app{"llmk-perf: validate and time llmk's operations against their peers. "
               "Without a subcommand: matmul_backward, with the options below."};
  // No subcommand: matmul_backward's options on the driver itself, as before
  // the subcommands existed (scripts and docs call `llmk-perf --impl tiled`).
  CLI::App* legacy = app.add_option_group(
      "matmul_backward (without a subcommand)",
      "the matmul backward's options when no subcommand is given");
  llmk::perf::matmul_backward::add_options(*legacy, matmul);
  llmk::perf::add_options(app, harness);

  CLI::App* matmul_cmd = app.add_subcommand(
      "matmul_backward",
      "the backward pass of a linear layer (dinp, dweight, dbias of out = inp·Wᵀ + bias)");
  llmk::perf::matmul_backward::add_options(*matmul_cmd, matmul);
  CLI::App* layernorm_cmd = app.add_subcommand(
      "layernorm_backward",
      "the backward pass of GPT-2's layer normalization (dinp, dweight, dbias)");
  llmk::perf::layernorm_backward::add_options(*layernorm_cmd, layernorm);
  CLI::App* attention_cmd = app.add_subcommand(
      "attention_backward",
      "the backward pass of GPT-2's causal self-attention (dqkv, given dout, qkv and att)");
  llmk::perf::attention_backward::add_options(*attention_cmd, attention);
  CLI::App* classifier_cmd = app.add_subcommand(
      "classifier_backward",
      "softmax cross-entropy's backward, fused (losses, and dlogits in place of the logits)");
  llmk::perf::classifier_backward::add_options(*classifier_cmd, classifier);
  CLI::App* gelu_cmd = app.add_subcommand(
      "gelu_backward", "the backward pass of GPT-2's GELU (dinp = gelu'(inp) · dout)");
  llmk::perf::gelu_backward::add_options(*gelu_cmd, gelu);
  CLI::App* encoder_cmd = app.add_subcommand(
      "encoder_backward",
      "the backward pass of GPT-2's token and position embeddings (dwte, dwpe, given dout and "
      "the tokens)");
  llmk::perf::encoder_backward::add_options(*encoder_cmd, encoder);
  for (CLI::App* cmd :
       {matmul_cmd, layernorm_cmd, attention_cmd, classifier_cmd, gelu_cmd, encoder_cmd}) {
    cmd->fallthrough();  // the harness's options after the subcommand too
    cmd->footer("llmk-perf's own options (--backend, --repeat, --warmup, --budget, --max-call, "
                "--threads, --json, --import, --no-check, --no-peers) may come before or after "
                "the subcommand: llmk-perf --help lists them.");
  }
  app.require_subcommand(0, 1);
  try {
    app.parse(argc, argv);
    // An operation's options given to the driver with another operation's
    // subcommand (before it, or fallen through from it): refused, not ignored.
    for (const CLI::App* cmd :
         {layernorm_cmd, attention_cmd, classifier_cmd, gelu_cmd, encoder_cmd})
      if (cmd->parsed() && !given(*legacy).empty())
        throw CLI::ValidationError(given(*legacy).front(), "is an option of matmul_backward, not of " +
                                                               cmd->get_name());
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);  // prints the help, or the error
    return rc == 0 ? 0 : 2;
  }
  llmk::perf::warn_about(harness);

  std::function<int()> run = [&] { return llmk::perf::matmul_backward::run(harness, matmul); };
  if (layernorm_cmd->parsed())
    run = [&] { return llmk::perf::layernorm_backward::run(harness, layernorm); };
  if (attention_cmd->parsed())
    run = [&] { return llmk::perf::attention_backward::run(harness, attention); };
  if (classifier_cmd->parsed())
    run = [&] { return llmk::perf::classifier_backward::run(harness, classifier); };
  if (gelu_cmd->parsed()) run = [&] { return llmk::perf::gelu_backward::run(harness, gelu); };
  if (encoder_cmd->parsed())
    run = [&] { return llmk::perf::encoder_backward::run(harness, encoder); };

  std::unique_ptr<Kokkos::ScopeGuard> kokkos;
  try {
    kokkos = llmk::perf::kokkos_compat::initialize(harness.threads);
  } catch (const std::exception& e) {  // e.g. a CUDA build on a machine without a GPU
    std::cerr << "llmk-perf: cannot initialize Kokkos: " << e.what() << "\n";
    return 1;
  }
  try {
    return run();
  } catch (const std::invalid_argument& e) {  // an --impl not available on --backend
    std::cerr << "llmk-perf: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "llmk-perf: error: " << e.what() << "\n";
    return 1;
  }
}
