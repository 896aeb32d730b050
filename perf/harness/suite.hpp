// The harness's run: a Suite of rows (an operation's implementations and its
// peers, on one problem) that it probes, validates and times one after the
// other on one backend, then prints and writes. It knows nothing of the
// operation: a row is a few callables, the problem a title, named sizes, a
// flop count and a number of "units" (e.g. rows) that probes take parts of.
//
// Per row, in order:
//  1. skip it if the row says so (Row::skip);
//  2. the probe (Row::run_part, unless --max-call 0): project the call's time
//     from warm calls on two parts of the problem (timing.hpp, project());
//     skip the row when that exceeds --max-call, saying so in the table;
//  3. the check (Row::verify, unless --no-check): reset the outputs, one call,
//     compare with the reference;
//  4. the timing: warm-up and timed calls within --budget (the checked call
//     counts as a warm-up), the L2 flushed before each timed call on a GPU;
//  5. its stages, each timed alone within a quarter of the budget.
#pragma once

#include "cli.hpp"
#include "l2_flush.hpp"
#include "machine.hpp"
#include "report.hpp"
#include "timer.hpp"
#include "timing.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace llmk::perf {

// A part of the call that the row can also run alone, for its bandwidth.
struct Stage {
  std::string name;    // the table column "<name> GB/s"
  std::string kernel;  // what runs it; "fused": inside another kernel (run is empty)
  double bytes = 0;    // bytes it moves, for GB/s
  std::function<void()> run;  // enqueue the stage alone; empty: not timed
};

struct CheckResult {
  bool valid = false;
  double max_rel_err = 0;
  Errors errors;       // per output, in Suite::error_columns' names
  std::string detail;  // one line, e.g. "rel err dinp 3e-07, dweight 2e-07, dbias 1e-07"
};

struct Row {
  std::string name;  // unique in the table with its precision
  std::string kind;  // "impl" or "peer"
  std::string precision;  // the numeric configuration it runs in
  std::function<void()> run;  // enqueue one call on the whole problem, on the timer's instance
  std::function<void(std::int64_t)> run_part;  // the same on the first n units; empty: no probe
  std::function<void()> reset;                // restore the outputs' initial values
  std::function<CheckResult()> verify;        // compare the outputs of one call with the reference; empty: no check
  std::vector<Stage> stages;
  double bytes = 0;  // bytes one call moves, for its GB/s (Suite::gbs_column); 0: none
  bool computes = true;  // false: it only moves the bytes (peer:copy): no GFLOP/s
  std::string note;  // under the table
  std::string skip;  // non-empty: not run, and why (in the table)
};

struct Suite {
  std::string title;    // "matmul backward"
  Params params;        // the problem's sizes, by name
  std::string derived;  // what follows the sizes in the header, e.g. "M=8192, 77.3 GFLOP per call"
  double flops = 0;     // per call; 0: no GFLOP/s
  std::int64_t units = 0;  // what run_part takes parts of
  std::string unit_name;   // "row"
  std::vector<std::string> stage_columns;  // stage names, in column order
  std::vector<std::string> error_columns;  // outputs whose errors CheckResult reports, in column order
  Flags flags;  // run-wide switches, written with every record; imports must match them
  std::vector<std::string> precisions;  // those this run times; imports of others are left out
  std::string default_precision;        // what an imported record without one ran in
  // Per precision, the row the "vs" column divides by.
  std::vector<std::pair<std::string, std::string>> comparisons;
  bool vs_column = true;      // the "vs" column (false: an operation with no comparison row)
  bool gflops_column = true;  // "GFLOP/s" (false: a memory-bound operation)
  bool gbs_column = false;    // "GB/s": Row::bytes per second
  // Per precision, the row whose GB/s is the bandwidth ceiling (e.g.
  // "peer:copy"): a column "% <ceiling_label>", each row's GB/s over its.
  std::vector<std::pair<std::string, std::string>> ceilings;
  std::string ceiling_label;
  std::vector<std::string> notes;  // printed under the header
  std::vector<Row> rows;
};

inline void progress(const std::string& msg, bool end_line = true) {
  std::cerr << msg << (end_line ? "\n" : "") << std::flush;
}

inline std::string seconds_text(double s) {
  char buf[32];
  if (s < 1) std::snprintf(buf, sizeof buf, "%.3g ms", 1e3 * s);
  else std::snprintf(buf, sizeof buf, "%.3g s", s);
  return buf;
}

inline TableLayout layout_of(const Suite& suite) {
  std::string title = suite.title + ",";
  for (const auto& [name, value] : suite.params) title += " " + name + "=" + std::to_string(value);
  if (!suite.derived.empty()) title += " (" + suite.derived + ")";
  TableLayout layout;
  layout.title = title;
  layout.stage_columns = suite.stage_columns;
  layout.error_columns = suite.error_columns;
  layout.comparisons = suite.comparisons;
  layout.notes = suite.notes;
  layout.vs_column = suite.vs_column;
  layout.gflops_column = suite.gflops_column;
  layout.gbs_column = suite.gbs_column;
  layout.ceilings = suite.ceilings;
  layout.ceiling_label = suite.ceiling_label;
  return layout;
}

// "gelu, overwrite_dinp" (those set), or "none".
inline std::string describe_flags(const Flags& flags) {
  std::string out;
  for (const auto& [name, on] : flags)
    if (on) out += (out.empty() ? "" : ", ") + name;
  return out.empty() ? "none" : out;
}

inline std::vector<std::string> param_names(const Params& params) {
  std::vector<std::string> names;
  for (const auto& p : params) names.push_back(p.first);
  return names;
}

inline std::vector<std::string> flag_names(const Flags& flags) {
  std::vector<std::string> names;
  for (const auto& f : flags) names.push_back(f.first);
  return names;
}

// The records of --import files, read before anything is timed (a bad file
// fails the run at once); those timed at other sizes, with other flags or in
// a precision this run does not time are left out.
inline std::vector<Record> load_imports(const Options& opt, const Suite& suite) {
  const RecordSchema schema{param_names(suite.params), suite.stage_columns, suite.error_columns,
                            flag_names(suite.flags), suite.default_precision};
  std::vector<Record> kept;
  for (const std::string& path : opt.imports) {
    for (Record& r : read_json_records(path, schema)) {
      const std::string why =
          r.params != suite.params ? "timed at other sizes"
          : r.flags != suite.flags ? "timed with other settings (" + describe_flags(r.flags) + ")"
          : std::find(suite.precisions.begin(), suite.precisions.end(), r.precision) ==
                  suite.precisions.end()
              ? "in precision " + r.precision + ", not timed here"
              : std::string();
      if (!why.empty()) {
        progress("--import " + path + ": leaving out '" + r.impl + "' (" + r.precision + "), " + why);
        continue;
      }
      kept.push_back(std::move(r));
    }
  }
  return kept;
}

// Runs every row of the suite, prints the header and the table on stdout and
// writes --json (run_rows, then report). Returns 0, or 1 when a row failed its check or threw.
// Probes, checks and times suite.rows, appending a record per row to
// `records`; returns whether a row failed its check or threw. Called once per
// group of rows that share buffers (e.g. one precision), so that a group's
// memory can be freed before the next is allocated.
template <class ExecSpace>
bool run_rows(const Options& opt, const ExecSpace& exec, const DeviceTimer<ExecSpace>& timer,
              const Suite& suite, std::vector<Record>& records) {
  const L2Flush<ExecSpace> flush_l2(exec);
  std::function<void()> before_each;
  if (flush_l2) before_each = [&flush_l2] { flush_l2(); };
  const std::string backend = ExecSpace::name();

  bool failed = false;
  const int n = int(suite.rows.size());
  for (int i = 0; i < n; ++i) {
    const Row& row = suite.rows[i];
    const std::string tag = "[" + std::to_string(i + 1) + "/" + std::to_string(n) + "] " +
                            row.name + " (" + row.precision + ")";
    Record r;
    r.impl = row.name;
    r.kind = row.kind;
    r.backend = backend;
    r.precision = row.precision;
    r.params = suite.params;
    r.flags = suite.flags;
    r.note = row.note;
    if (!row.skip.empty()) {
      r.skipped = row.skip;
      progress(tag + ": skipped: " + row.skip);
      records.push_back(std::move(r));
      continue;
    }
    try {
      if (opt.max_call_s > 0 && row.run_part) {
        progress(tag + ": probing ... ", false);
        const Projection p = project(timer, row.run_part, suite.units, opt.max_call_s);
        if (p.probed) {
          r.projected_s = p.seconds;
          char buf[300];
          std::snprintf(buf, sizeof buf,
                        "warm probes on %lld and %lld %ss took %s and %s: %s fixed + %s per %s "
                        "project %s a call",
                        (long long)p.n1, (long long)p.n2, suite.unit_name.c_str(),
                        seconds_text(p.t1).c_str(), seconds_text(p.t2).c_str(),
                        seconds_text(p.fixed_s).c_str(), seconds_text(p.per_unit_s).c_str(),
                        suite.unit_name.c_str(), seconds_text(p.seconds).c_str());
          progress(buf);
          if (p.seconds > opt.max_call_s) {
            char why[160];
            std::snprintf(why, sizeof why, "projected %.3g s a call > --max-call %g", p.seconds,
                          opt.max_call_s);
            r.skipped = why;
            r.note = (r.note.empty() ? "" : r.note + "; ") + "skipped: " + buf +
                     ", over --max-call (--max-call 0 times it anyway)";
            records.push_back(std::move(r));
            continue;
          }
        } else {
          progress("too small to probe");
        }
      }
      double checked_s = 0;  // the checked call's time, reused by the timing
      if (opt.check && row.verify) {
        progress(tag + ": checking ... ", false);
        if (row.reset) row.reset();
        checked_s = timer.time(row.run);
        const CheckResult c = row.verify();
        r.valid = c.valid;
        r.max_rel_err = c.max_rel_err;
        r.errors = c.errors;
        progress(std::string(c.valid ? "ok" : "FAILED") + " (" + c.detail + "; " +
                 seconds_text(checked_s) + ")");
        failed |= !c.valid;
      }
      progress(tag + ": timing ... ", false);
      const Timing t = time_calls(opt.plan, timer, row.run, checked_s, before_each);
      r.ms_median = t.ms_median;
      r.ms_min = t.ms_min;
      r.repeats = t.repeats;
      if (!Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible)
        r.host_us = t.host_us_median;  // a GPU: the call returns before its work is done
      if (suite.flops > 0 && row.computes && t.ms_median > 0) r.gflops = suite.flops / (t.ms_median * 1e-3) * 1e-9;
      if (row.bytes > 0 && t.ms_median > 0) r.gbs = row.bytes / (t.ms_median * 1e-3) * 1e-9;
      progress(std::to_string(t.repeats) + " repeats, median " + seconds_text(t.ms_median * 1e-3) +
               (r.host_us ? ", host part " + seconds_text(*r.host_us * 1e-6) : ""));
      for (const Stage& stage : row.stages) {
        StageRecord s{stage.name, stage.kernel, {}, {}};
        if (stage.run) {
          progress(tag + ": timing its " + stage.name + " pass (" + stage.kernel + ") ... ", false);
          TimingPlan stage_plan = opt.plan;
          stage_plan.budget_s /= 4;
          const Timing b = time_calls(stage_plan, timer, stage.run, 0, before_each);
          s.ms_median = b.ms_median;
          if (stage.bytes > 0 && b.ms_median > 0) s.gbs = stage.bytes / (b.ms_median * 1e-3) * 1e-9;
          progress(std::to_string(b.repeats) + " repeats, median " +
                   seconds_text(b.ms_median * 1e-3));
        }
        r.stages.push_back(std::move(s));
      }
    } catch (const std::exception& ex) {
      progress(std::string("ERROR: ") + ex.what());
      r.valid = false;
      r.note = std::string("error: ") + ex.what();
      failed = true;
    }
    records.push_back(std::move(r));
  }
  return failed;
}

// Prints the header and the table of `records` (then the imports) on stdout
// and writes --json. Returns 0, or 1 when `failed`.
inline int report(const Options& opt, const Machine& machine, const Suite& suite,
                  std::vector<Record> records, std::vector<Record> imports, bool failed) {
  for (Record& r : imports) records.push_back(std::move(r));
  const TableLayout layout = layout_of(suite);
  print_header(std::cout, machine, layout);
  print_table(std::cout, records, layout);
  if (!opt.json.empty()) {
    write_json(opt.json, machine, layout, records);
    progress("wrote " + opt.json);
  }
  if (failed) progress("llmk-perf: some rows FAILED (see above)");
  return failed ? 1 : 0;
}

template <class ExecSpace>
int run_suite(const Options& opt, const ExecSpace& exec, const DeviceTimer<ExecSpace>& timer,
              const Machine& machine, const Suite& suite, std::vector<Record> imports) {
  std::vector<Record> records;
  const bool failed = run_rows(opt, exec, timer, suite, records);
  return report(opt, machine, suite, std::move(records), std::move(imports), failed);
}

// f(exec) with a default instance of the execution space --backend names.
template <class F>
int with_backend(const std::string& backend, F&& f) {
#ifdef KOKKOS_ENABLE_SERIAL
  if (backend == "serial") return f(Kokkos::Serial());
#endif
#ifdef KOKKOS_ENABLE_OPENMP
  if (backend == "openmp") return f(Kokkos::OpenMP());
#endif
#ifdef KOKKOS_ENABLE_CUDA
  if (backend == "cuda") return f(Kokkos::Cuda());
#endif
  throw std::invalid_argument("backend '" + backend + "' is not built into Kokkos");
}

}  // namespace llmk::perf
