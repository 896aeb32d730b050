// What every operation's benchmark does with llmk_reference (the part of the
// float64 references every operation shares: Precision, compare), knowing
// nothing of the operation:
//  - the precisions --precision names, parsed into reference::Precision, and
//    their storage and math mode in llmk's terms;
//  - whether an implementation declares a precision;
//  - the comparisons of a row's outputs with their float64 references
//    turned into the harness's CheckResult.
#pragma once

#include "implementations.hpp"
#include "suite.hpp"

#include <llmk/operation.hpp>
#include <llmk/types.hpp>
#include <core/reference/compare.hpp>
#include <core/reference/precision.hpp>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace llmk::perf {

// "all", or a comma list of `names` (validated: list_validator), in names'
// order, parsed.
inline std::vector<reference::Precision> select_precisions(const std::string& list,
                                                           const std::vector<std::string>& names) {
  std::vector<reference::Precision> out;
  for (const std::string& name : select_names(list, names)) {
    reference::Precision p;
    if (!reference::parse_precision(name, p))
      throw std::logic_error("llmk-perf: the reference knows no precision '" + name + "'");
    out.push_back(p);
  }
  return out;
}

// The library's name of a precision's storage ("tf32" is "fp32" with
// Math::tf32), and its math mode.
inline std::string storage_name(reference::Precision p) {
  return p == reference::Precision::tf32 ? "fp32" : reference::precision_name(p);
}
inline Math math_of(reference::Precision p) {
  return p == reference::Precision::tf32 ? Math::tf32 : Math::fp32;
}

// The precisions --precision may name: an operation's configurations, with
// "tf32" (fp32 storage, TF32 products) after "fp32".
inline std::vector<std::string> with_tf32(const std::vector<std::string>& configs) {
  std::vector<std::string> names;
  for (const std::string& config : configs) {
    names.push_back(config);
    if (config == "fp32") names.push_back("tf32");
  }
  return names;
}

// Whether an implementation declares a precision (tf32: fp32 storage and info.tf32).
inline bool declares(const ImplInfo& info, reference::Precision p) {
  const std::string storage = storage_name(p);
  const bool stored = std::find(info.precisions.begin(), info.precisions.end(), storage) !=
                      info.precisions.end();
  return stored && (p != reference::Precision::tf32 || info.tf32);
}
// The same by the precision's name ("bf16", "tf32"); an unknown one: no.
inline bool declares(const ImplInfo& info, const std::string& precision) {
  reference::Precision p;
  return reference::parse_precision(precision, p) && declares(info, p);
}

// A row's check from its outputs' comparisons: valid when all are, the
// largest error, each output's error under its name (the suite's
// error_columns), and the detail line "rel err dinp 3.0e-07, dweight ..."
// followed by `missing` (e.g. "dbias not computed") and each failure's message.
inline CheckResult check_result(const std::vector<reference::Comparison>& cmp,
                                const std::string& missing = {}) {
  CheckResult r{true, 0, {}, "rel err"};
  char buf[64];
  for (const reference::Comparison& c : cmp) {
    r.valid &= c.ok;
    r.max_rel_err = std::max(r.max_rel_err, c.rel_l2);
    r.errors.emplace_back(c.what, c.rel_l2);
    std::snprintf(buf, sizeof buf, " %s %.1e,", c.what.c_str(), c.rel_l2);
    r.detail += buf;
  }
  if (!missing.empty()) r.detail += " " + missing + ",";
  r.detail.pop_back();
  for (const reference::Comparison& c : cmp)
    if (!c.ok) r.detail += "; " + c.message;
  return r;
}

}  // namespace llmk::perf
