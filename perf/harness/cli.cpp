#include "cli.hpp"

#include "kokkos_compat.hpp"
#include "machine.hpp"
#include "report.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <stdexcept>
#include <iostream>
#include <thread>

namespace llmk::perf {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

int hardware_threads() { return int(std::max(1u, std::thread::hardware_concurrency())); }

}  // namespace

CLI::Validator count_at_least(long long min, const std::string& what) {
  return CLI::Validator(
      [min, what](std::string& value) -> std::string {
        long long n = 0;
        try {
          std::size_t used = 0;
          n = std::stoll(value, &used);
          if (used != value.size()) throw std::invalid_argument(value);
        } catch (const std::exception&) {
          return "'" + value + "' is not a whole number" + (what.empty() ? "" : " of " + what);
        }
        if (n < min)
          return "at least " + std::to_string(min) + (what.empty() ? "" : " " + what) + ", got " +
                 value;
        return {};
      },
      ">=" + std::to_string(min), "COUNT");
}

CLI::Option* add_size(CLI::App& app, const std::string& flag, std::int64_t& value,
                      const std::string& help, long long min) {
  return app.add_option(flag, value, help + (min == 0 ? " (0: a valid no-op)" : ""))
      ->capture_default_str()
      ->check(count_at_least(min, ""));
}

CLI::Option* add_overwrite(CLI::App& app, const std::string& flag, bool& value,
                           const std::string& assigned, const std::string& why) {
  return app.add_flag(flag, value,
                      assigned + " instead of += (Update::overwrite" +
                          (why.empty() ? "" : ", " + why) +
                          "); the initial values are NaN, never read");
}

CLI::Validator seconds(bool zero_allowed) {
  return CLI::Validator(
      [zero_allowed](std::string& value) -> std::string {
        double x = 0;
        try {
          std::size_t used = 0;
          x = std::stod(value, &used);
          if (used != value.size()) throw std::invalid_argument(value);
        } catch (const std::exception&) {
          return "'" + value + "' is not a number of seconds";
        }
        if (!std::isfinite(x)) return "'" + value + "' is not a finite number of seconds";
        if (zero_allowed ? x < 0 : x <= 0)
          return std::string(zero_allowed ? "at least 0" : "more than 0") + " seconds, got " +
                 value;
        return {};
      },
      zero_allowed ? "SECONDS>=0" : "SECONDS>0", "SECONDS");
}

void add_options(CLI::App& app, Options& opt) {
  opt.backend = lower(Kokkos::DefaultExecutionSpace::name());
  opt.threads = hardware_threads();
  if (kokkos_compat::max_host_threads() > 0)
    opt.threads = std::min(opt.threads, kokkos_compat::max_host_threads());

  app.add_option("--backend", opt.backend, "Kokkos execution space")
      ->capture_default_str()
      ->check(CLI::IsMember(compiled_backends()));
  app.add_option("--repeat", opt.plan.repeat, "most timed calls")
      ->capture_default_str()
      ->check(count_at_least(1, "timed calls"));
  app.add_option("--warmup", opt.plan.warmup, "untimed calls first")
      ->capture_default_str()
      ->check(count_at_least(0, "untimed calls"));
  app.add_option("--budget", opt.plan.budget_s, "seconds of timed calls per row")
      ->capture_default_str()
      ->check(seconds(false));
  app.add_option("--max-call", opt.max_call_s,
                 "seconds: skip a row whose call, projected from warm calls on two parts of the "
                 "problem (about 1/64 and 1/256 of it), is slower; 0: no limit")
      ->capture_default_str()
      ->check(seconds(true));

  const int max_threads = kokkos_compat::max_host_threads();
  app.add_option("--threads", opt.threads,
                 "host threads (Kokkos' OpenMP pool, host libraries and peers); at most " +
                     (max_threads > 0 ? std::to_string(max_threads) : std::string("any")) +
                     ", more than the " + std::to_string(hardware_threads()) +
                     " of this machine is warned about")
      ->capture_default_str()
      ->check(CLI::Validator(
          [max_threads](std::string& value) -> std::string {
            int n = 0;
            try {
              std::size_t used = 0;
              n = std::stoi(value, &used);
              if (used != value.size()) throw std::invalid_argument(value);
            } catch (const std::exception&) {
              return "'" + value + "' is not a number of threads";
            }
            if (n < 1) return "at least 1 thread";
            if (max_threads > 0 && n > max_threads)
              return std::to_string(n) + " threads is more than Kokkos' OpenMP backend takes (" +
                     std::to_string(max_threads) + ")";
            return {};
          },
          max_threads > 0 ? "1.." + std::to_string(max_threads) : std::string(">=1"), "THREADS"));
  app.add_option("--json", opt.json,
                 "write the results as JSON to this file (its directory must exist and be "
                 "writable: checked before the run)")
      ->check(CLI::Validator([](std::string& path) { return json_path_problem(path); }, "PATH",
                             "WRITABLE"));
  app.add_option("--import", opt.imports,
                 "add the records of an llmk-perf JSON file (e.g. perf/torch_baseline.py's) to "
                 "the table; repeatable")
      ->check(CLI::ExistingFile);
  app.add_flag_callback("--no-check", [&opt] { opt.check = false; },
                        "skip validating each row against the reference before timing it");
  app.add_flag_callback("--no-peers", [&opt] { opt.peers = false; },
                        "skip the peers (codes other than llmk's doing the same work)");
  app.add_flag("--device-time", opt.device_time,
               "Cuda: time the device's work alone, the host's part of each call (validation, "
               "launches) hidden behind a busy kernel queued first (default: from an idle GPU, "
               "the host's part included)");
}

void warn_about(const Options& opt) {
  if (opt.threads > hardware_threads())
    std::cerr << "llmk-perf: warning: --threads " << opt.threads << " is more than the "
              << hardware_threads() << " hardware threads of this machine: times will suffer\n";
}

}  // namespace llmk::perf
