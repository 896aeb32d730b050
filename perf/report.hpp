// llmk-perf's output: a header and a table on stdout, and the JSON file.
#pragma once

#include "inputs.hpp"

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace llmk::perf {

struct Machine {
  std::string cpu;  // /proc/cpuinfo "model name"
  int threads = 0;
  std::string kokkos_version;  // from KOKKOS_VERSION, e.g. "3.4.01"
  std::string backend;         // ExecSpace::name()
  std::optional<std::string> gpu;  // Cuda backend only
  // Device backends: a 1 GiB device-to-device copy, bytes read + written per
  // second: the bandwidth ceiling the bias pass is compared with.
  std::optional<double> device_copy_gbs;
};

// One implementation or peer. Optional fields are null in the JSON and "-" in
// the table: times when the call threw, bias_gbs where the bias pass was not
// timed alone, valid/max_rel_err with --no-check.
struct Record {
  std::string impl, backend;
  Shape shape;
  std::optional<double> ms_median, ms_min;
  int repeats = 0;
  std::optional<double> gflops, bias_gbs;
  std::optional<bool> valid;
  std::optional<double> max_rel_err;
  std::string bias_kernel;  // what bias_gbs timed; empty when not measured
  std::string note;         // free text (imported records)
  bool imported = false;    // read with --import, not timed by this run
};

void print_header(std::ostream& os, const Machine& machine, const Shape& shape);
// reference: the impl name whose ms_median the "vs <reference>" column divides.
void print_table(std::ostream& os, const std::vector<Record>& records, const std::string& reference);
void write_json(const std::string& path, const Machine& machine, const std::vector<Record>& records);
// The records of a JSON file in write_json's format (e.g. perf/torch_baseline.py's).
std::vector<Record> read_json_records(const std::string& path);

}  // namespace llmk::perf
