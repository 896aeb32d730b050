// Test parameters every operation shares: its entry points, and its
// implementations × the precisions each declares, read from what the library
// says about them (an operation's *_impls(): ImplInfo, or a struct derived
// from it) and an availability function for the space under test.
// tests/contract/ uses them for any operation, through its adapter.
#pragma once

#include <core/reference/precision.hpp>
#include <llmk/operation.hpp>

#include <functional>
#include <string>
#include <vector>

namespace llmk_test {

// The three entry points of every operation: rank-2 views, rank-3 views
// (activations B × T × ...), raw pointers with sizes.
enum class Entry { Rank2Views, Rank3Views, RawPointers };

// An entry point's name in test names: "rank2", "rank3", "raw".
inline const char* entry_test_name(Entry e) {
  return e == Entry::Rank2Views ? "rank2" : e == Entry::Rank3Views ? "rank3" : "raw";
}

// What an operation's implementations are on the space under test: their
// infos (in the order "auto" prefers them), which are available, and what
// "auto" stands for in a precision.
struct ImplCatalog {
  std::vector<llmk::ImplInfo> infos;
  std::function<bool(const std::string&)> available;
  std::function<std::string(llmk::reference::Precision)> auto_impl;

  // nullptr for "auto" and unknown names.
  const llmk::ImplInfo* info(const std::string& name) const {
    for (const llmk::ImplInfo& i : infos)
      if (i.name == name) return &i;
    return nullptr;
  }
};

// An operation's infos as ImplInfo (the part every operation's info shares).
template <class Info>
std::vector<llmk::ImplInfo> as_impl_infos(const std::vector<Info>& infos) {
  return std::vector<llmk::ImplInfo>(infos.begin(), infos.end());
}

// Other operations' implementation names (`others`, each an operation's
// infos) that are not among `own`'s, each once: the names an operation must
// refuse as unknown (an adapter's foreign_impls()).
inline std::vector<std::string> foreign_impl_names(
    const std::vector<llmk::ImplInfo>& own, const std::vector<std::vector<llmk::ImplInfo>>& others) {
  std::vector<std::string> names;
  const auto has = [](const std::vector<std::string>& v, const std::string& name) {
    for (const std::string& n : v)
      if (n == name) return true;
    return false;
  };
  std::vector<std::string> own_names;
  for (const llmk::ImplInfo& info : own) own_names.push_back(info.name);
  for (const std::vector<llmk::ImplInfo>& infos : others)
    for (const llmk::ImplInfo& info : infos)
      if (!has(own_names, info.name) && !has(names, info.name)) names.push_back(info.name);
  return names;
}

// "auto", then every implementation available on the space, in the library's order.
inline std::vector<std::string> impls_under_test(const ImplCatalog& cat) {
  std::vector<std::string> impls{"auto"};
  for (const llmk::ImplInfo& info : cat.infos)
    if (cat.available(info.name)) impls.push_back(info.name);
  return impls;
}

// Whether an implementation's info declares a precision configuration (tf32:
// fp32 with info.tf32).
inline bool declares(const llmk::ImplInfo& info, llmk::reference::Precision precision) {
  using llmk::reference::Precision;
  const std::string name = precision == Precision::tf32
                               ? std::string("fp32")
                               : std::string(llmk::reference::precision_name(precision));
  bool found = false;
  for (const std::string& p : info.precisions) found = found || p == name;
  return found && (precision != Precision::tf32 || info.tf32);
}

// Whether `impl` runs `precision` on the space, by the infos: an
// implementation available there that declares it; "auto" when any does.
inline bool impl_runs(const ImplCatalog& cat, const std::string& impl,
                      llmk::reference::Precision precision) {
  for (const llmk::ImplInfo& info : cat.infos) {
    if (impl != "auto" && info.name != impl) continue;
    if (cat.available(info.name) && declares(info, precision)) return true;
  }
  return false;
}

// What an implementation ("auto": the one it stands for in `precision`)
// promises in its info.
inline bool promises_bitwise_repeatable(const ImplCatalog& cat, const std::string& impl,
                                        llmk::reference::Precision precision) {
  const llmk::ImplInfo* info = cat.info(impl == "auto" ? cat.auto_impl(precision) : impl);
  return info != nullptr && info->deterministic;
}
// Whether every bf16 output is rounded once from its float sum (cuBLAS and
// cuBLASLt do not always); an unknown name: held to it.
inline bool promises_rounding_once(const ImplCatalog& cat, const std::string& impl,
                                   llmk::reference::Precision precision) {
  const llmk::ImplInfo* info = cat.info(impl == "auto" ? cat.auto_impl(precision) : impl);
  return info == nullptr || info->rounds_once;
}

// An implementation ("auto" included) and a precision configuration it runs.
struct ImplPrecision {
  std::string impl;
  llmk::reference::Precision precision;
};

// Every (implementation under test, precision of `precisions` it runs on the
// space) pair, in the library's order; `skip_fp32` leaves plain fp32 out,
// `deterministic` keeps the implementations that declare themselves so
// ("auto" is not an implementation: left out then).
inline std::vector<ImplPrecision> impl_precisions(
    const ImplCatalog& cat, const std::vector<llmk::reference::Precision>& precisions,
    bool skip_fp32 = false, bool deterministic = false) {
  std::vector<ImplPrecision> v;
  for (const std::string& impl : impls_under_test(cat)) {
    if (deterministic && (impl == "auto" || !cat.info(impl)->deterministic)) continue;
    for (llmk::reference::Precision p : precisions) {
      if (skip_fp32 && p == llmk::reference::Precision::fp32) continue;
      if (impl_runs(cat, impl, p)) v.push_back({impl, p});
    }
  }
  return v;
}

// A precision's name in a test name: "fp32", "tf32", "bf16", "bf16_fp32grad".
inline std::string precision_test_name(llmk::reference::Precision precision) {
  std::string name = llmk::reference::precision_name(precision);
  for (char& ch : name)
    if (ch == '-') ch = '_';
  return name;
}

}  // namespace llmk_test
