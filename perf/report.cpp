#include "report.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace llmk::perf {
namespace {

std::string format(const char* fmt, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, x);
  return buf;
}
std::string format(const char* fmt, const std::optional<double>& x) {
  return x ? format(fmt, *x) : "-";
}

template <class T>
nlohmann::json or_null(const std::optional<T>& x) {
  return x ? nlohmann::json(*x) : nlohmann::json(nullptr);
}

template <class T>
std::optional<T> optional_field(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return j.at(key).get<T>();
}

}  // namespace

void print_header(std::ostream& os, const Machine& m, const Shape& s) {
  os << "llmk-perf: matmul backward, B=" << s.B << " T=" << s.T << " C=" << s.C << " OC=" << s.OC
     << " (M=" << s.M() << ", " << format("%.1f", s.flops() * 1e-9) << " GFLOP per call)\n"
     << "backend " << m.backend << ", threads " << m.threads << ", CPU " << m.cpu
     << ", Kokkos " << m.kokkos_version;
  if (m.gpu) os << ", GPU " << *m.gpu;
  if (m.device_copy_gbs) os << ", device copy " << int(*m.device_copy_gbs) << " GB/s (read+write)";
  os << "\n\n";
}

void print_table(std::ostream& os, const std::vector<Record>& records, const std::string& reference) {
  std::optional<double> ref_ms;
  for (const Record& r : records)
    if (r.impl == reference) ref_ms = r.ms_median;

  const std::string vs = "vs " + reference;
  char line[256];
  std::snprintf(line, sizeof line, "%-16s %-8s %11s %11s %7s %9s %9s %11s %5s %12s\n", "impl",
                "backend", "ms median", "ms min", "repeats", "GFLOP/s", "bias GB/s", "max rel err",
                "valid", vs.c_str());
  os << line;
  for (const Record& r : records) {
    std::optional<double> ratio;
    if (ref_ms && r.ms_median) ratio = *ref_ms / *r.ms_median;
    const char* valid = !r.valid ? "-" : *r.valid ? "yes" : "NO";
    const std::string name = r.imported ? r.impl + "*" : r.impl;
    std::snprintf(line, sizeof line, "%-16s %-8s %11s %11s %7d %9s %9s %11s %5s %12s\n",
                  name.c_str(), r.backend.c_str(), format("%.3f", r.ms_median).c_str(),
                  format("%.3f", r.ms_min).c_str(), r.repeats, format("%.1f", r.gflops).c_str(),
                  format("%.1f", r.bias_gbs).c_str(), format("%.2e", r.max_rel_err).c_str(), valid,
                  format("%.3f", ratio).c_str());
    os << line;
  }
  for (const Record& r : records) {
    if (r.imported)
      os << r.impl << "*: imported, not timed by this run. " << r.note << "\n";
    else if (!r.note.empty())
      os << r.impl << ": " << r.note << "\n";
  }
}

void write_json(const std::string& path, const Machine& m, const std::vector<Record>& records) {
  nlohmann::json machine = {{"cpu", m.cpu},
                            {"threads", m.threads},
                            {"kokkos_version", m.kokkos_version},
                            {"backend", m.backend}};
  if (m.gpu) machine["gpu"] = *m.gpu;
  if (m.device_copy_gbs) machine["device_copy_gbs"] = *m.device_copy_gbs;
  nlohmann::json out = {{"machine", machine}, {"records", nlohmann::json::array()}};
  for (const Record& r : records) {
    out["records"].push_back({{"impl", r.impl},
                              {"backend", r.backend},
                              {"B", r.shape.B},
                              {"T", r.shape.T},
                              {"C", r.shape.C},
                              {"OC", r.shape.OC},
                              {"ms_median", or_null(r.ms_median)},
                              {"ms_min", or_null(r.ms_min)},
                              {"repeats", r.repeats},
                              {"gflops", or_null(r.gflops)},
                              {"bias_gbs", or_null(r.bias_gbs)},
                              {"bias_kernel", r.bias_kernel.empty() ? nlohmann::json(nullptr)
                                                                    : nlohmann::json(r.bias_kernel)},
                              {"valid", or_null(r.valid)},
                              {"max_rel_err", or_null(r.max_rel_err)}});
    if (!r.note.empty()) out["records"].back()["note"] = r.note;
    if (r.imported) out["records"].back()["imported"] = true;
  }
  std::ofstream file(path);
  if (!file) throw std::runtime_error("cannot write " + path);
  file << out.dump(2) << "\n";
  if (!file) throw std::runtime_error("error writing " + path);
}

std::vector<Record> read_json_records(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw std::runtime_error("cannot read " + path);
  std::vector<Record> records;
  try {
    const nlohmann::json in = nlohmann::json::parse(file);
    for (const nlohmann::json& j : in.at("records")) {
      Record r;
      r.impl = j.at("impl").get<std::string>();
      r.backend = optional_field<std::string>(j, "backend").value_or("?");
      r.shape = {j.at("B").get<index_t>(), j.at("T").get<index_t>(), j.at("C").get<index_t>(),
                 j.at("OC").get<index_t>()};
      r.ms_median = optional_field<double>(j, "ms_median");
      r.ms_min = optional_field<double>(j, "ms_min");
      r.repeats = optional_field<int>(j, "repeats").value_or(0);
      r.gflops = optional_field<double>(j, "gflops");
      r.bias_gbs = optional_field<double>(j, "bias_gbs");
      r.valid = optional_field<bool>(j, "valid");
      r.max_rel_err = optional_field<double>(j, "max_rel_err");
      r.bias_kernel = optional_field<std::string>(j, "bias_kernel").value_or("");
      r.note = optional_field<std::string>(j, "note").value_or("");
      r.imported = true;
      records.push_back(std::move(r));
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path + ": not an llmk-perf JSON file (" + e.what() + ")");
  }
  return records;
}

}  // namespace llmk::perf
