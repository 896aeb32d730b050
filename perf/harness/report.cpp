#include "report.hpp"

#include <nlohmann/json.hpp>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <cstdio>
#include <filesystem>
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
nlohmann::json or_null(const std::string& s) {
  return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
}

template <class T>
std::optional<T> optional_field(const nlohmann::json& j, const std::string& key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return j.at(key).get<T>();
}

// "  %-*s": a column of at least `width` characters, right-aligned unless left.
std::string cell(const std::string& s, std::size_t width, bool left = false) {
  if (s.size() >= width) return s;
  const std::string pad(width - s.size(), ' ');
  return left ? s + pad : pad + s;
}

}  // namespace

const StageRecord* Record::stage(const std::string& name) const {
  for (const StageRecord& s : stages)
    if (s.name == name) return &s;
  return nullptr;
}

void print_header(std::ostream& os, const Machine& m, const TableLayout& layout) {
  os << "llmk-perf: " << layout.title << "\n"
     << "backend " << m.backend << ", threads " << m.threads << ", CPU " << m.cpu << ", Kokkos "
     << m.kokkos_version;
  if (m.gpu) os << ", GPU " << *m.gpu;
  if (m.device_copy_gbs) os << ", device copy " << int(*m.device_copy_gbs) << " GB/s (read+write)";
  os << "\nhost BLAS: " << m.host_blas << "\ntiming: " << m.timer << "\n";
  for (const std::string& note : layout.notes) os << note << "\n";
  os << "\n";
}

// The row the "vs" column divides r's time by: the comparison of r's
// precision, timed by this run (null when there is none).
static std::optional<double> comparison_ms(const std::vector<Record>& records, const Record& r,
                                           const TableLayout& layout) {
  for (const auto& [precision, name] : layout.comparisons) {
    if (precision != r.precision) continue;
    for (const Record& c : records)
      if (c.impl == name && c.precision == precision && !c.imported) return c.ms_median;
  }
  return std::nullopt;
}

// r's GB/s as a percentage of its precision's ceiling row (this run's).
static std::optional<double> ceiling_pct(const std::vector<Record>& records, const Record& r,
                                         const TableLayout& layout) {
  if (!r.gbs) return std::nullopt;
  for (const auto& [precision, name] : layout.ceilings) {
    if (precision != r.precision) continue;
    for (const Record& c : records)
      if (c.impl == name && c.precision == precision && !c.imported && c.gbs && *c.gbs > 0)
        return 100.0 * *r.gbs / *c.gbs;
  }
  return std::nullopt;
}

// "vs peer:cublas-sgemm" when every precision of the table's own rows
// compares with the same row, else "vs peer" and a note says which row each
// precision compares with.
static std::string comparison_title(const std::vector<Record>& records, const TableLayout& layout,
                                    std::string* note) {
  std::vector<std::string> names, precisions;
  for (const auto& c : layout.comparisons)
    if (std::find(names.begin(), names.end(), c.second) == names.end()) names.push_back(c.second);
  for (const Record& r : records)
    if (!r.imported && std::find(precisions.begin(), precisions.end(), r.precision) == precisions.end())
      precisions.push_back(r.precision);
  bool every_precision = true;
  for (const std::string& p : precisions)
    every_precision &= std::any_of(layout.comparisons.begin(), layout.comparisons.end(),
                                   [&p](const auto& c) { return c.first == p; });
  if (names.size() == 1 && every_precision) return "vs " + names[0];
  for (const auto& [precision, name] : layout.comparisons)
    *note += (note->empty() ? "vs peer: the time of " : ", ") + name + " (" + precision + ")";
  if (!note->empty()) *note += " divided by the row's";
  if (!every_precision) *note += std::string(note->empty() ? "vs peer: " : "; ") + "none for the other precisions";
  return "vs peer";
}

void print_table(std::ostream& os, const std::vector<Record>& records, const TableLayout& layout) {
  std::size_t name_w = 16;
  for (const Record& r : records) name_w = std::max(name_w, r.impl.size() + (r.imported ? 1 : 0));
  std::string vs_note;
  const std::string vs = layout.vs_column ? comparison_title(records, layout, &vs_note) : "";
  const std::size_t vs_w = std::max<std::size_t>(12, vs.size());
  const std::string pct = "% " + layout.ceiling_label;
  const std::size_t pct_w = std::max<std::size_t>(7, pct.size());
  const bool pct_column = !layout.ceilings.empty();
  const bool host_column = std::any_of(records.begin(), records.end(),
                                       [](const Record& r) { return r.host_us.has_value(); });

  std::string line = cell("impl", name_w, true) + " " + cell("backend", 8, true) + " " +
                     cell("precision", 13, true) + " " + cell("ms median", 11) + " " +
                     cell("ms min", 11) + " " + cell("repeats", 7);
  if (host_column) line += " " + cell("host us", 8);
  if (layout.gflops_column) line += " " + cell("GFLOP/s", 9);
  if (layout.gbs_column) line += " " + cell("GB/s", 9);
  if (pct_column) line += " " + cell(pct, pct_w);
  for (const std::string& s : layout.stage_columns) line += " " + cell(s + " GB/s", 9);
  if (layout.error_columns.empty()) line += " " + cell("max rel err", 11);
  for (const std::string& e : layout.error_columns) line += " " + cell(e + " err", 11);
  line += " " + cell("valid", 5);
  if (layout.vs_column) line += " " + cell(vs, vs_w);
  os << line << "\n";

  for (const Record& r : records) {
    std::optional<double> ratio;
    const std::optional<double> ref_ms = comparison_ms(records, r, layout);
    if (ref_ms && r.ms_median && *r.ms_median > 0) ratio = *ref_ms / *r.ms_median;
    const char* valid = !r.valid ? "-" : *r.valid ? "yes" : "NO";
    line = cell(r.imported ? r.impl + "*" : r.impl, name_w, true) + " " +
           cell(r.backend, 8, true) + " " + cell(r.precision, 13, true) + " " +
           cell(format("%.3f", r.ms_median), 11) + " " + cell(format("%.3f", r.ms_min), 11) + " " +
           cell(std::to_string(r.repeats), 7);
    if (host_column) line += " " + cell(format("%.1f", r.host_us), 8);
    if (layout.gflops_column) line += " " + cell(format("%.1f", r.gflops), 9);
    if (layout.gbs_column) line += " " + cell(format("%.1f", r.gbs), 9);
    if (pct_column) line += " " + cell(format("%.1f", ceiling_pct(records, r, layout)), pct_w);
    for (const std::string& name : layout.stage_columns) {
      const StageRecord* s = r.stage(name);
      std::string text = "-";
      if (s && s->gbs) text = format("%.1f", *s->gbs);
      else if (s && s->kernel == "fused") text = "(fused)";
      line += " " + cell(text, 9);
    }
    if (layout.error_columns.empty()) line += " " + cell(format("%.2e", r.max_rel_err), 11);
    for (const std::string& name : layout.error_columns) {
      std::optional<double> err;
      for (const auto& e : r.errors)
        if (e.first == name) err = e.second;
      line += " " + cell(format("%.2e", err), 11);
    }
    line += " " + cell(valid, 5);
    if (layout.vs_column) line += " " + cell(format("%.3f", ratio), vs_w);
    if (!r.skipped.empty()) line += "  skipped: " + r.skipped;
    os << line << "\n";
  }
  if (!vs_note.empty()) os << vs_note << "\n";
  // A row's note once, however many precisions the row ran in.
  std::vector<std::pair<std::string, std::string>> printed;
  for (const Record& r : records) {
    if (!r.imported && r.note.empty()) continue;
    const std::string name = r.imported ? r.impl + "* (" + r.precision + ")" : r.impl;
    if (std::find(printed.begin(), printed.end(), std::make_pair(name, r.note)) != printed.end())
      continue;
    printed.emplace_back(name, r.note);
    if (r.imported)
      os << name << ": imported, not timed by this run. " << r.note << "\n";
    else
      os << name << ": " << r.note << "\n";
  }
}

std::string json_path_problem(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path p(path);
  if (path.empty() || !p.has_filename()) return "'" + path + "' does not name a file";
  const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  if (!fs::is_directory(dir, ec))
    return "directory '" + dir.string() + "' of '" + path + "' does not exist";
  if (fs::is_directory(p, ec)) return "'" + path + "' is a directory";
  // Permissions say little (root passes every check, /proc refuses new
  // files): open it as the run will, without truncating an existing file,
  // and remove a file created for the test.
  const bool existed = fs::exists(p, ec);
  const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) return "cannot write '" + path + "': " + std::strerror(errno);
  ::close(fd);
  if (!existed) fs::remove(p, ec);
  return {};
}

void write_json(const std::string& path, const Machine& m, const TableLayout& layout,
                const std::vector<Record>& records) {
  nlohmann::json machine = {{"cpu", m.cpu},
                            {"threads", m.threads},
                            {"hardware_threads", m.hardware_threads},
                            {"kokkos_version", m.kokkos_version},
                            {"backend", m.backend},
                            {"host_blas", m.host_blas},
                            {"timer", m.timer}};
  if (m.gpu) machine["gpu"] = *m.gpu;
  if (m.device_copy_gbs) machine["device_copy_gbs"] = *m.device_copy_gbs;
  nlohmann::json out = {{"machine", machine}, {"records", nlohmann::json::array()}};
  for (const Record& r : records) {
    nlohmann::json j = {{"impl", r.impl}, {"kind", r.kind}, {"backend", r.backend},
                        {"precision", r.precision}};
    for (const auto& [name, value] : r.params) j[name] = value;
    for (const auto& [name, value] : r.flags) j[name] = value;
    j["ms_median"] = or_null(r.ms_median);
    j["ms_min"] = or_null(r.ms_min);
    j["repeats"] = r.repeats;
    j["host_us_median"] = or_null(r.host_us);
    j["gflops"] = or_null(r.gflops);
    if (layout.gbs_column) j["gbs"] = or_null(r.gbs);
    if (!layout.ceilings.empty())
      j[layout.ceiling_label + "_pct"] = or_null(ceiling_pct(records, r, layout));
    // Every stage column's keys, null where the row has no such stage.
    for (const std::string& name : layout.stage_columns) {
      const StageRecord* s = r.stage(name);
      j[name + "_gbs"] = s ? or_null(s->gbs) : nlohmann::json(nullptr);
      j[name + "_kernel"] = s ? or_null(s->kernel) : nlohmann::json(nullptr);
      j[name + "_ms"] = s ? or_null(s->ms_median) : nlohmann::json(nullptr);
    }
    j["valid"] = or_null(r.valid);
    j["max_rel_err"] = or_null(r.max_rel_err);
    for (const std::string& name : layout.error_columns) {
      std::optional<double> err;
      for (const auto& e : r.errors)
        if (e.first == name) err = e.second;
      j[name + "_rel_err"] = or_null(err);
    }
    if (r.projected_s) j["projected_s"] = *r.projected_s;
    if (!r.skipped.empty()) j["skipped"] = r.skipped;
    if (!r.note.empty()) j["note"] = r.note;
    if (r.imported) j["imported"] = true;
    out["records"].push_back(std::move(j));
  }
  std::ofstream file(path);
  if (!file) throw std::runtime_error("cannot write " + path);
  file << out.dump(2) << "\n";
  if (!file) throw std::runtime_error("error writing " + path);
}

std::vector<Record> read_json_records(const std::string& path, const RecordSchema& schema) {
  std::ifstream file(path);
  if (!file) throw std::runtime_error("cannot read " + path);
  std::vector<Record> records;
  try {
    const nlohmann::json in = nlohmann::json::parse(file);
    for (const nlohmann::json& j : in.at("records")) {
      Record r;
      r.impl = j.at("impl").get<std::string>();
      r.kind = optional_field<std::string>(j, "kind").value_or("");
      r.backend = optional_field<std::string>(j, "backend").value_or("?");
      r.precision = optional_field<std::string>(j, "precision").value_or(schema.default_precision);
      for (const std::string& name : schema.params)
        r.params.emplace_back(name, j.at(name).get<std::int64_t>());
      for (const std::string& name : schema.flags)
        r.flags.emplace_back(name, optional_field<bool>(j, name).value_or(false));
      r.ms_median = optional_field<double>(j, "ms_median");
      r.ms_min = optional_field<double>(j, "ms_min");
      r.repeats = optional_field<int>(j, "repeats").value_or(0);
      r.host_us = optional_field<double>(j, "host_us_median");
      r.gflops = optional_field<double>(j, "gflops");
      r.gbs = optional_field<double>(j, "gbs");
      for (const std::string& name : schema.stages) {
        StageRecord s{name, optional_field<std::string>(j, name + "_kernel").value_or(""),
                      optional_field<double>(j, name + "_ms"), optional_field<double>(j, name + "_gbs")};
        if (!s.kernel.empty() || s.gbs) r.stages.push_back(std::move(s));
      }
      r.valid = optional_field<bool>(j, "valid");
      r.max_rel_err = optional_field<double>(j, "max_rel_err");
      for (const std::string& name : schema.errors)
        r.errors.emplace_back(name, optional_field<double>(j, name + "_rel_err"));
      r.skipped = optional_field<std::string>(j, "skipped").value_or("");
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
