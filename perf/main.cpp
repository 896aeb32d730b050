// llmk-perf: validates, then times, llmk's implementations of an operation
// and its peers (other codes doing the same work) on the same inputs. One
// driver, the operation as a subcommand (one for each operation of
// cmake/operations.cmake with a perf/<op>/benchmark.cpp):
//   llmk-perf <operation> [options]          perf/<operation>/
//   llmk-perf [options]                      matmul_backward, as before subcommands
// The harness (perf/harness/: timing, probes, the device timer, the table and
// the JSON, the common options) knows nothing of the operations. Its options
// (--backend, --json, --import, ...) belong to llmk-perf itself: they may come
// before the subcommand or after it (the subcommands fall through to them).
// Progress on stderr, the table on stdout, optionally a JSON file (--json) to
// which --import adds records timed elsewhere (perf/torch_baseline.py).
// Exits 1 when a row failed its check, 2 on bad arguments.
#include "harness/cli.hpp"
#include "harness/kokkos_compat.hpp"
#include "harness/subcommand.hpp"

#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>
#include <stdexcept>
#include <vector>

// Each operation's subcommand (perf/<op>/benchmark.cpp), all_subcommands():
// generated from cmake/operations.cmake.
#include "subcommands.hpp"

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
  namespace perf = llmk::perf;
  // matmul_backward first (cmake/operations.cmake's order): it is also the
  // driver's own (no subcommand).
  const std::vector<perf::Subcommand> ops = perf::all_subcommands();
  perf::Options harness;

  CLI::App app{"llmk-perf: validate and time llmk's operations against their peers. "
               "Without a subcommand: matmul_backward, with the options below."};
  // No subcommand: matmul_backward's options on the driver itself, as before
  // the subcommands existed (scripts and docs call `llmk-perf --impl tiled`).
  CLI::App* legacy = app.add_option_group(
      "matmul_backward (without a subcommand)",
      "the matmul backward's options when no subcommand is given");
  ops[0].add_options(*legacy);
  perf::add_options(app, harness);

  std::vector<CLI::App*> cmds;
  for (const perf::Subcommand& op : ops) {
    CLI::App* cmd = app.add_subcommand(op.name, op.help);
    op.add_options(*cmd);
    cmd->fallthrough();  // the harness's options after the subcommand too
    cmd->footer("llmk-perf's own options (--backend, --repeat, --warmup, --budget, --max-call, "
                "--threads, --json, --import, --no-check, --no-peers) may come before or after "
                "the subcommand: llmk-perf --help lists them.");
    cmds.push_back(cmd);
  }
  app.require_subcommand(0, 1);
  std::size_t chosen = 0;  // matmul_backward without a subcommand
  try {
    app.parse(argc, argv);
    for (std::size_t i = 0; i < cmds.size(); ++i)
      if (cmds[i]->parsed()) chosen = i;
    // An operation's options given to the driver with another operation's
    // subcommand (before it, or fallen through from it): refused, not ignored.
    if (chosen != 0 && !given(*legacy).empty())
      throw CLI::ValidationError(given(*legacy).front(),
                                 "is an option of matmul_backward, not of " + ops[chosen].name);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);  // prints the help, or the error
    return rc == 0 ? 0 : 2;
  }
  perf::warn_about(harness);

  std::unique_ptr<Kokkos::ScopeGuard> kokkos;
  try {
    kokkos = llmk::perf::kokkos_compat::initialize(harness.threads);
  } catch (const std::exception& e) {  // e.g. a CUDA build on a machine without a GPU
    std::cerr << "llmk-perf: cannot initialize Kokkos: " << e.what() << "\n";
    return 1;
  }
  try {
    return ops[chosen].run(harness);
  } catch (const std::invalid_argument& e) {  // an --impl not available on --backend
    std::cerr << "llmk-perf: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "llmk-perf: error: " << e.what() << "\n";
    return 1;
  }
}
