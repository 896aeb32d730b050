// The command line options of the harness, shared by every operation's
// benchmark: backend, timing, threads, output. They belong to llmk-perf
// itself; each operation adds its own (its sizes, the implementations to run)
// to its subcommand (perf/main.cpp).
#pragma once

#include "timing.hpp"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace llmk::perf {

struct Options {
  std::string backend;  // lower case: serial, openmp, cuda
  TimingPlan plan;
  double max_call_s = 30;  // skip a row whose projected call is slower; 0: no limit
  int threads = 1;         // host threads: Kokkos' OpenMP pool, OpenBLAS, host peers
  std::string json;        // write the results here; checked before the run
  std::vector<std::string> imports;  // JSON records timed elsewhere (perf/torch_baseline.py)
  bool check = true;  // validate each row before timing it
  bool peers = true;  // run the peers too
  bool device_time = false;  // Cuda: time the device's work alone (timer.hpp)
};

// Sets the defaults (the default execution space, every hardware thread) and
// adds --backend --repeat --warmup --budget --max-call --threads --json
// --import --no-check --no-peers --device-time to app. The checks that need no Kokkos run
// while parsing: --threads above what Kokkos' OpenMP backend takes, a --json
// path that cannot be written, an --import file that does not exist are
// refused before anything runs.
void add_options(CLI::App& app, Options& opt);

// After parsing, before Kokkos starts: the options that are allowed but
// questionable (more threads than the hardware has), on stderr.
void warn_about(const Options& opt);

}  // namespace llmk::perf
