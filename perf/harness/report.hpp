// llmk-perf's output: a header and a table on stdout, and the JSON file; and
// the JSON records of other runs (--import). Nothing here knows the operation:
// its sizes are named parameters, its per-stage figures named stages.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace llmk::perf {

// The sizes of a problem, in the order the operation names them ("B", 8), ...
using Params = std::vector<std::pair<std::string, std::int64_t>>;

struct Machine {
  std::string cpu;  // /proc/cpuinfo "model name"
  int threads = 0;  // host threads of the run
  int hardware_threads = 0;  // std::thread::hardware_concurrency()
  std::string kokkos_version;  // from KOKKOS_VERSION, e.g. "3.4.01"
  std::string backend;         // ExecSpace::name()
  std::string timer;           // how times were measured (DeviceTimer::method())
  std::string host_blas;       // "OpenBLAS 0.3.21, openmp threads, kernels SkylakeX" (llmk/host_blas.hpp)
  std::optional<std::string> gpu;  // Cuda backend only
  // Device backends: a 1 GiB device-to-device copy, bytes read + written per
  // second: the bandwidth ceiling a stage's GB/s is compared with.
  std::optional<double> device_copy_gbs;
};

// A part of a call timed alone (e.g. matmul backward's dbias pass).
struct StageRecord {
  std::string name;    // table column "<name> GB/s"; JSON <name>_gbs, <name>_kernel, <name>_ms
  std::string kernel;  // what ran it; "fused": done inside another kernel, not timed alone
  std::optional<double> ms_median, gbs;
};

// Run-wide switches of the operation that change what a call computes
// ("gelu", true), ...: JSON booleans, false when a record lacks one.
using Flags = std::vector<std::pair<std::string, bool>>;

// One output's error against the reference, e.g. ("dinp", 3e-7); null: not checked.
using Errors = std::vector<std::pair<std::string, std::optional<double>>>;

// One row: an implementation, a peer, or a record imported from another run.
// Optional fields are null in the JSON and "-" in the table: times when the
// call threw or the row was skipped, valid/max_rel_err with --no-check.
struct Record {
  std::string impl;  // the row's name, unique in the table with its precision ("tiled", "peer:openblas")
  std::string kind;  // "impl" or "peer"
  std::string backend;
  std::string precision;  // the numeric configuration the row ran in ("fp32", "bf16", ...)
  Params params;
  Flags flags;
  std::optional<double> ms_median, ms_min;
  int repeats = 0;
  // The host's part of a call on a GPU (DeviceTimer::host_seconds), median µs:
  // table "host us" where a row has it, JSON host_us_median; null on host spaces.
  std::optional<double> host_us;
  std::optional<double> gflops;
  std::optional<double> gbs;  // bytes the call moves per second (JSON "gbs" where the table has the column)
  std::vector<StageRecord> stages;
  std::optional<bool> valid;
  std::optional<double> max_rel_err;
  Errors errors;  // per output (table "<name> err", JSON <name>_rel_err)
  std::optional<double> projected_s;  // what the probes projected a call to take
  std::string skipped;  // why the row was not timed; empty: it was
  std::string note;     // free text, under the table
  bool imported = false;  // read with --import, not timed by this run

  const StageRecord* stage(const std::string& name) const;
};

struct TableLayout {
  std::string title;       // first line, e.g. "matmul backward, B=8 T=1024 C=768 OC=3072 (...)"
  std::vector<std::string> stage_columns;  // stage names shown as "<name> GB/s" columns
  std::vector<std::string> error_columns;  // output names shown as "<name> err" columns
  // Per precision, the row whose ms_median the "vs" column divides by (a row
  // is compared with the one of its own precision).
  std::vector<std::pair<std::string, std::string>> comparisons;
  std::vector<std::string> notes;  // lines printed under the header
  bool vs_column = true;      // the "vs" column
  bool gflops_column = true;  // "GFLOP/s"
  bool gbs_column = false;    // "GB/s" (Record::gbs; JSON "gbs")
  // Per precision, the row whose GB/s is the bandwidth ceiling: a column
  // "% <ceiling_label>" (JSON "<ceiling_label>_pct") with each row's GB/s as a
  // percentage of that row's (this run's, not an imported one).
  std::vector<std::pair<std::string, std::string>> ceilings;
  std::string ceiling_label;
};

// What read_json_records looks for in a record, and the values older files
// lack: a record without "precision" ran in default_precision, one without a
// flag ran with it false.
struct RecordSchema {
  std::vector<std::string> params, stages, errors, flags;
  std::string default_precision;
};

void print_header(std::ostream& os, const Machine& machine, const TableLayout& layout);
void print_table(std::ostream& os, const std::vector<Record>& records, const TableLayout& layout);

// Empty when `path` can be written: its directory exists and is writable and
// the file, if it exists, is a writable regular file; otherwise why not.
std::string json_path_problem(const std::string& path);
// Every record has the keys of every stage column (<name>_gbs, _kernel, _ms),
// null where it has no such stage.
void write_json(const std::string& path, const Machine& machine, const TableLayout& layout,
                const std::vector<Record>& records);
// The records of a JSON file in write_json's format (e.g. perf/torch_baseline.py's),
// with their params, stages, errors and flags under the schema's names.
std::vector<Record> read_json_records(const std::string& path, const RecordSchema& schema);

}  // namespace llmk::perf
