// The command line options of the harness, shared by every operation's
// benchmark: backend, timing, threads, output. They belong to llmk-perf
// itself; each operation adds its own (its sizes, the implementations to run)
// to its subcommand (perf/main.cpp).
#pragma once

#include "timing.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
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

// Validators of numbers that parse the value themselves, so that the message
// says what is wrong with it (CLI11's PositiveNumber and NonNegativeNumber
// answered `--B abc` with "Value abc not in range 0.000000 to 1.797693e+308"
// and `--repeat 0` with "0 not in range 0 to ...", and let `--budget nan`
// through):
//   count_at_least(min, what)  a whole number ≥ min ("'abc' is not a whole
//                              number of calls", "--repeat must be at least 1, got 0")
//   seconds(zero_allowed)      a finite number of seconds, > 0 (or ≥ 0)
CLI::Validator count_at_least(long long min, const std::string& what);
CLI::Validator seconds(bool zero_allowed);

// An operation's size: `--B 8`, a whole number ≥ min (its default shown);
// 0 adds "(0: a valid no-op)" to the help.
CLI::Option* add_size(CLI::App& app, const std::string& flag, std::int64_t& value,
                      const std::string& help, long long min = 0);

// A flag that overwrites outputs (`--overwrite-dinp`): "<assigned> instead
// of += (Update::overwrite, <why>); the initial values are NaN, never read".
// `assigned`: "dinp =", or "dwte = and dwpe ="; `why` may be empty.
CLI::Option* add_overwrite(CLI::App& app, const std::string& flag, bool& value,
                           const std::string& assigned, const std::string& why);

// After parsing, before Kokkos starts: the options that are allowed but
// questionable (more threads than the hardware has), on stderr.
void warn_about(const Options& opt);

}  // namespace llmk::perf
