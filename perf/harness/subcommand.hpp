// An operation in llmk-perf: its subcommand's name and one line of help, its
// options and its run. Each perf/<op>/benchmark.cpp makes its own
// (`Subcommand subcommand()` in llmk::perf::<op>); perf/main.cpp lists them.
#pragma once

#include "cli.hpp"
#include "driver.hpp"

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <string>
#include <utility>

namespace llmk::perf {

struct Subcommand {
  std::string name;  // "gelu_backward"
  std::string help;  // what the operation computes, in one line
  // Adds the operation's options (sizes, --impl, --precision, flags) to app;
  // called once for the subcommand (matmul_backward's also for the driver
  // itself), the values kept by the Subcommand.
  std::function<void(CLI::App&)> add_options;
  // On the backend harness.backend, Kokkos initialized: 0, or 1 when a row
  // failed its check; std::invalid_argument for arguments refused.
  std::function<int(const Options& harness)> run;
};

// The Subcommand of a benchmark over its own options struct O: add(app, o)
// adds them, the run is the driver's (driver.hpp) over Benchmark(o).
template <class Benchmark, class O, class Add>
Subcommand subcommand_of(std::string name, std::string help, Add add) {
  auto opt = std::make_shared<O>();
  return {std::move(name), std::move(help), [opt, add](CLI::App& app) { add(app, *opt); },
          [opt](const Options& harness) {
            Benchmark benchmark(*opt);
            return perf::run(harness, benchmark);
          }};
}

}  // namespace llmk::perf
