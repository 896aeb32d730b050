// One operation's run on --backend, the harness's half: the backend's
// default instance (with_backend), its timer, the machine's description, an
// llmk::Context on the instance, the --import records, then the operation's
// precisions one after the other (each allocates, runs and frees its own
// buffers: run_rows), then the table and the JSON (report).
//
// The operation's half is an object with
//   template <class ExecSpace> Suite suite(const Options& harness);
//       the problem's header, columns, notes, the precisions it times (their
//       names, in order) and comparisons; it may throw std::invalid_argument
//       (e.g. an --impl not available on the backend) before anything runs;
//   template <class ExecSpace>
//   bool run_precision(const Env<ExecSpace>& env, const std::string& precision,
//                      Suite& suite, std::vector<Record>& records);
//       the rows of one precision: returns whether one failed; may add a
//       line to suite.notes (e.g. "nothing runs it here").
#pragma once

#include "cli.hpp"
#include "kokkos_compat.hpp"
#include "machine.hpp"
#include "report.hpp"
#include "suite.hpp"
#include "timer.hpp"

#include <llmk/context.hpp>

#include <string>
#include <vector>

namespace llmk::perf {

// What a precision's rows run with.
template <class ExecSpace>
struct Env {
  const ExecSpace& exec;
  const Options& opt;
  const DeviceTimer<ExecSpace>& timer;
  Context<ExecSpace>& ctx;  // llmk's calls: the instance's workspace and handles
  int threads;              // host threads of the run (one on Serial)
};

template <class ExecSpace, class Operation>
int run_on(const ExecSpace& exec, const Options& opt, Operation& op) {
  Suite suite = op.template suite<ExecSpace>(opt);
  std::vector<Record> imports = load_imports(opt, suite);

  // Host work of a run uses the backend's threads: one on Serial.
  const int threads = on_host<ExecSpace> ? kokkos_compat::concurrency(exec) : opt.threads;
  const DeviceTimer<ExecSpace> timer(exec, opt.device_time);
  const Machine machine = describe_machine(exec, timer, threads);

  Context<ExecSpace> ctx(exec);
  const Env<ExecSpace> env{exec, opt, timer, ctx, threads};
  std::vector<Record> records;
  bool failed = false;
  const std::vector<std::string> precisions = suite.precisions;
  for (const std::string& precision : precisions)
    failed |= op.template run_precision<ExecSpace>(env, precision, suite, records);
  return report(opt, machine, suite, std::move(records), std::move(imports), failed);
}

// run_on on the backend --backend names. Kokkos must be initialized.
template <class Operation>
int run(const Options& opt, Operation& op) {
  return with_backend(opt.backend, [&](const auto& exec) { return run_on(exec, opt, op); });
}

}  // namespace llmk::perf
