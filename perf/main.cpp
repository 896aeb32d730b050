// llmk-perf: validates, then times, llmk's implementations of an operation
// and its peers (other codes doing the same work) on the same inputs.
// Today one operation: the matmul backward (perf/matmul_backward/). The
// harness (perf/harness/: timing, probes, the device timer, the table and the
// JSON, the common options) knows nothing of it.
// Progress on stderr, the table on stdout, optionally a JSON file (--json) to
// which --import adds records timed elsewhere (perf/torch_baseline.py).
// Exits 1 when a row failed its check, 2 on bad arguments.
#include "harness/cli.hpp"
#include "harness/kokkos_compat.hpp"
#include "matmul_backward/benchmark.hpp"

#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>
#include <stdexcept>

int main(int argc, char** argv) {
  llmk::perf::Options harness;
  llmk::perf::matmul_backward::Options op;

  CLI::App app{"llmk-perf: validate and time llmk's matmul backward against peers"};
  llmk::perf::matmul_backward::add_options(app, op);
  llmk::perf::add_options(app, harness);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);  // prints the help, or the error
    return rc == 0 ? 0 : 2;
  }
  llmk::perf::warn_about(harness);

  std::unique_ptr<Kokkos::ScopeGuard> kokkos;
  try {
    kokkos = llmk::perf::kokkos_compat::initialize(harness.threads);
  } catch (const std::exception& e) {  // e.g. a CUDA build on a machine without a GPU
    std::cerr << "llmk-perf: cannot initialize Kokkos: " << e.what() << "\n";
    return 1;
  }
  try {
    return llmk::perf::matmul_backward::run(harness, op);
  } catch (const std::invalid_argument& e) {  // an --impl not available on --backend
    std::cerr << "llmk-perf: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "llmk-perf: error: " << e.what() << "\n";
    return 1;
  }
}
