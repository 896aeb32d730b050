// What every operation's benchmark does with llmk_reference (the part of the
// float64 references every operation shares: Precision, bf16 on the host,
// compare) and llmk's element types, knowing nothing of the operation:
//  - the precisions --precision names, parsed into reference::Precision;
//  - whether an implementation declares a precision;
//  - a precision's element types (activations, parameter gradients);
//  - host values converted to an element type, uploaded into views;
//  - an output read back, compared with its float64 reference, and the
//    comparisons of a row turned into the harness's CheckResult.
#pragma once

#include "implementations.hpp"
#include "suite.hpp"

#include <llmk/bf16.hpp>
#include <llmk/operation.hpp>
#include <llmk/types.hpp>
#include <core/reference/bf16.hpp>
#include <core/reference/compare.hpp>
#include <core/reference/precision.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
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

// The element types of a precision configuration: Act for the activations
// and their gradients (llm.c's floatX buffers), Grad for the parameters'
// gradients (float in "bf16-fp32grad").
template <class A, class G>
struct Types {
  using Act = A;
  using Grad = G;
};

// f(Types<...>{}) for a precision's element types.
template <class F>
auto with_types(reference::Precision p, F&& f) {
  using reference::Precision;
  switch (p) {
    case Precision::bf16: return f(Types<bf16, bf16>{});
    case Precision::bf16_fp32grad: return f(Types<bf16, float>{});
    default: return f(Types<float, float>{});  // fp32, tf32
  }
}

template <class T>
std::vector<T> converted(const std::vector<float>& values) {
  std::vector<T> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = T(values[i]);  // exact: representable
  return out;
}

template <class T>
using HostConst2 = Kokkos::View<const T**, Kokkos::LayoutRight, Kokkos::HostSpace,
                                Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class T>
using HostConst1 = Kokkos::View<const T*, Kokkos::LayoutRight, Kokkos::HostSpace,
                                Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

template <class ExecSpace, class T>
void upload(const ExecSpace& exec, const Matrix<ExecSpace, T>& dst, const std::vector<T>& src) {
  Kokkos::deep_copy(exec, dst, HostConst2<T>(src.data(), dst.extent(0), dst.extent(1)));
}
template <class ExecSpace, class T>
void upload(const ExecSpace& exec, const Vector<ExecSpace, T>& dst, const std::vector<T>& src) {
  Kokkos::deep_copy(exec, dst, HostConst1<T>(src.data(), dst.extent(0)));
}

// An output read back (float, or bf16 widened) against the float64 reference.
inline reference::Comparison compare_output(const char* what, const float* out,
                                            const std::vector<double>& ref, std::int64_t cols,
                                            double tol) {
  return reference::compare(what, out, ref.data(), ref.size(), cols, tol);
}
inline reference::Comparison compare_output(const char* what, const bf16* out,
                                            const std::vector<double>& ref, std::int64_t cols,
                                            double tol) {
  return reference::compare_bf16(what, reinterpret_cast<const std::uint16_t*>(out), ref.data(),
                                 ref.size(), cols, tol);
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
