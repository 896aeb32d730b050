// What the library says about an operation's implementations (llmk::impls,
// available, auto_impl of its tag), held to what the other contract tests
// rely on: names unique, lower case and not "auto"; an implementation not
// compiled in is available nowhere; every precision of the operation is
// declared by some implementation available on the space (those that are not
// Op::everywhere, as TF32, where any is), each declares only the operation's
// precisions, and "auto" stands for the first available one that declares the
// precision and whose threads fit the space (a host-BLAS implementation only
// where llmk::host_blas_runs_auto allows) and whose info does not say
// "auto" passes it over for that precision (ImplInfo::auto_passes_over); for
// a precision that none here runs: "" or std::invalid_argument;
// every implementation this build was configured with (CMake's
// LLMK_TEST_CONFIGURED_IMPLS, from what it found: KokkosKernels, cuBLAS) is in
// the list and compiled; and the lists the other aspects register their tests
// from are not empty (an empty one would register nothing, and pass).
#pragma once

#include "contract/device_problem.hpp"

#include <llmk/host_blas.hpp>

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>
#include <stdexcept>

#ifndef LLMK_TEST_CONFIGURED_IMPLS
#error "tests/CMakeLists.txt defines LLMK_TEST_CONFIGURED_IMPLS (\"op:impl,...\", maybe empty)"
#endif

namespace llmk_test::contract {

// Whether "auto" may take `info` on Space: an implementation on the host BLAS
// only where that BLAS shares Kokkos' threads and its kernels fit the CPU
// (an OpenBLAS on its own pthreads, or on Prescott fallback kernels, is passed
// over: llmk/host_blas.hpp).
template <class Space>
bool auto_may_take(const llmk::ImplInfo& info) {
  if (!info.host_blas || !Kokkos::SpaceAccessibility<Space, Kokkos::HostSpace>::accessible)
    return true;
  return llmk::host_blas_runs_auto(llmk::host_blas(), Space().concurrency());
}

template <class Op, class Space>
void check_impl_list() {
  const ImplCatalog cat = Op::template catalog<Space>();
  ASSERT_FALSE(cat.infos.empty());
  EXPECT_TRUE(cat.available("auto"));
  std::vector<std::string> configs;
  for (Precision p : Op::precisions()) configs.push_back(llmk::reference::precision_name(p));
  std::set<std::string> names;
  for (const llmk::ImplInfo& info : cat.infos) {
    SCOPED_TRACE(info.name);
    EXPECT_TRUE(names.insert(info.name).second) << "duplicate name";
    EXPECT_NE(info.name, "auto");
    EXPECT_FALSE(info.name.empty());
    for (const unsigned char ch : info.name)
      EXPECT_TRUE(std::islower(ch) || std::isdigit(ch) || ch == '_') << ch;
    if (!info.compiled) EXPECT_FALSE(cat.available(info.name));
    EXPECT_FALSE(info.precisions.empty());
    for (const std::string& p : info.precisions)
      EXPECT_NE(std::find(configs.begin(), configs.end(), p), configs.end())
          << "declares '" << p << "', not a configuration of the operation";
  }
  for (Precision p : Op::precisions()) {
    SCOPED_TRACE(llmk::reference::precision_name(p));
    std::string first;
    for (const llmk::ImplInfo& info : cat.infos)
      if (first.empty() && cat.available(info.name) && declares(info, p) &&
          auto_may_take<Space>(info) &&
          std::count(info.auto_passes_over.begin(), info.auto_passes_over.end(),
                     llmk::reference::precision_name(p)) == 0)
        first = info.name;
    if (!first.empty()) {
      EXPECT_EQ(cat.auto_impl(p), first);
      continue;
    }
    EXPECT_FALSE(Op::everywhere(p)) << "no implementation available here runs it";
    try {
      EXPECT_EQ(cat.auto_impl(p), "") << "\"auto\" stands for an implementation that does not run it";
    } catch (const std::invalid_argument&) {
    }
  }
}

// The implementations of `op` this build was configured with ("op:impl" items
// of LLMK_TEST_CONFIGURED_IMPLS).
inline std::vector<std::string> configured_impls(const std::string& op) {
  std::vector<std::string> v;
  std::stringstream list(LLMK_TEST_CONFIGURED_IMPLS);
  for (std::string item; std::getline(list, item, ',');)
    if (item.rfind(op + ":", 0) == 0) v.push_back(item.substr(op.size() + 1));
  return v;
}

template <class Op, class Space>
void check_configured_impls() {
  const ImplCatalog cat = Op::template catalog<Space>();
  for (const std::string& name : configured_impls(Op::name())) {
    const llmk::ImplInfo* info = cat.info(name);
    EXPECT_TRUE(info != nullptr && info->compiled)
        << "'" << name << "': the build was configured with it (LLMK_TEST_CONFIGURED_IMPLS = \""
        << LLMK_TEST_CONFIGURED_IMPLS << "\"), the library's list "
        << (info ? "says it is not compiled" : "does not have it");
  }
  // What the aspects register their tests from: an implementation for every
  // precision that must run everywhere.
  const std::vector<ImplPrecision> cases = impl_precisions_of<Op, Space>();
  for (Precision p : Op::precisions()) {
    if (!Op::everywhere(p)) continue;
    std::size_t n = 0;
    for (const ImplPrecision& ip : cases) n += ip.precision == p;
    EXPECT_GT(n, 0u) << llmk::reference::precision_name(p)
                     << ": no implementation × precision to register tests for";
  }
}

template <class Op, class Space>
void register_impl_tests() {
  add_test(Op::name(), "Impls", "ConfiguredAndRegistered", "",
           [] { check_configured_impls<Op, Space>(); });
  add_test(Op::name(), "Impls", "ListAndAuto", "", [] { check_impl_list<Op, Space>(); });
}

}  // namespace llmk_test::contract
