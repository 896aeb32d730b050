// The generic suite, compiled once per Kokkos execution space: the build
// defines LLMK_TEST_SPACE (Serial, OpenMP, Cuda) and names the binary after it.
// Every implementation available on the space, and "auto", against the
// float64 reference, through each of the three entry points; determinism;
// contexts and user workspaces. (Concurrency: test_concurrency.cpp; M ≥ 2³¹:
// test_huge_rows.cpp, both in the same binary.)
#include "support/compare.hpp"
#include "support/device.hpp"
#include "support/problem.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <llmk/matmul_backward.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#ifndef LLMK_TEST_SPACE
#error "compile with -DLLMK_TEST_SPACE=<a Kokkos execution space: Serial, OpenMP, Cuda>"
#endif

namespace {

using namespace llmk_test;
using Space = Kokkos::LLMK_TEST_SPACE;

// --- every implementation × every shape × every entry point ------------------

struct Case {
  std::string impl;
  Shape shape;
};

// How gtest prints a Case (instead of its bytes).
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.impl << " on " << c.shape.name << " (B=" << c.shape.B
      << ", T=" << c.shape.T << ", C=" << c.shape.C << ", OC=" << c.shape.OC
      << (c.shape.bias ? "" : ", no bias") << ")";
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const std::string& impl : impls_under_test<Space>())
    for (const Shape& shape : test_shapes()) cases.push_back({impl, shape});
  return cases;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return info.param.impl + "_" + info.param.shape.name;
}

class MatmulBackward : public ::testing::TestWithParam<Case> {
 protected:
  // Outputs start at random values (the initial gradients), the inputs sit
  // between NaN guard bands; the results must equal initial + gradient, with
  // guards and inputs untouched.
  static void check(Entry entry) {
    const Case& c = GetParam();
    const HostProblem p = make_problem(c.shape);
    const DeviceProblem<Space> d(p);
    run_matmul_backward(d, entry, c.impl);
    Results r;
    ASSERT_TRUE(download_results(d, p, r));
    expect_matches_reference(r, reference_backward(p), c.shape);
  }
};

TEST_P(MatmulBackward, Rank2Views) { check(Entry::Rank2Views); }
TEST_P(MatmulBackward, Rank3Views) { check(Entry::Rank3Views); }
TEST_P(MatmulBackward, RawPointers) { check(Entry::RawPointers); }

INSTANTIATE_TEST_SUITE_P(AllImpls, MatmulBackward, ::testing::ValuesIn(all_cases()), case_name);

// --- NaN in dout reaches exactly the outputs that depend on it ---------------

// Indices of the NaN elements of a rows × cols matrix, as row·cols + col.
std::vector<std::int64_t> nan_positions(const std::vector<float>& v) {
  std::vector<std::int64_t> at;
  for (std::size_t i = 0; i < v.size(); ++i)
    if (std::isnan(v[i])) at.push_back(std::int64_t(i));
  return at;
}

std::vector<std::int64_t> row_positions(std::int64_t row, std::int64_t cols) {
  std::vector<std::int64_t> at;
  for (std::int64_t c = 0; c < cols; ++c) at.push_back(row * cols + c);
  return at;
}

class NanInDout : public ::testing::TestWithParam<std::string> {};

// dout(m0, o0) = NaN: dinp row m0, dweight row o0 and dbias(o0) become NaN;
// every other element stays finite and correct.
TEST_P(NanInDout, ReachesItsRowsAndBiasOnly) {
  const Shape s{"nan", 2, 9, 24, 40};
  const std::int64_t m0 = 11, o0 = 17;
  HostProblem p = make_problem(s);
  p.dout[m0 * s.OC + o0] = std::numeric_limits<float>::quiet_NaN();
  const DeviceProblem<Space> d(p);
  run_matmul_backward(d, Entry::Rank2Views, GetParam());
  Results r;
  ASSERT_TRUE(download_results(d, p, r));
  EXPECT_EQ(nan_positions(r.dinp), row_positions(m0, s.C)) << "NaN elements of dinp";
  EXPECT_EQ(nan_positions(r.dweight), row_positions(o0, s.C)) << "NaN elements of dweight";
  EXPECT_EQ(nan_positions(r.dbias), std::vector<std::int64_t>{o0}) << "NaN elements of dbias";
  // The reference has NaN in the same places; the other elements must match it.
  expect_matches_reference(r, reference_backward(p), s);
}

INSTANTIATE_TEST_SUITE_P(AllImpls, NanInDout,
                         ::testing::ValuesIn(impls_under_test<Space>()), impl_test_name);

// --- determinism ----------------------------------------------------------------

class Deterministic : public ::testing::TestWithParam<std::string> {};

// The same inputs and initial gradients give bitwise identical outputs from run
// to run (no floating-point atomics, fixed reduction orders). The shape spans
// several tiles, K chunks and dbias row segments on every backend, with
// remainders everywhere.
TEST_P(Deterministic, BitwiseIdenticalRuns) {
  const HostProblem p = make_problem({"det", 3, 347, 201, 531});
  Results first;
  for (int run = 0; run < 3; ++run) {
    const DeviceProblem<Space> d(p);
    run_matmul_backward(d, Entry::Rank2Views, GetParam());
    Results r;
    ASSERT_TRUE(download_results(d, p, r));
    if (run == 0) {
      first = r;
      continue;
    }
    EXPECT_TRUE(bitwise_equal("dinp", r.dinp, first.dinp)) << "run " << run;
    EXPECT_TRUE(bitwise_equal("dweight", r.dweight, first.dweight)) << "run " << run;
    EXPECT_TRUE(bitwise_equal("dbias", r.dbias, first.dbias)) << "run " << run;
  }
}

// Every implementation whose MatmulBackwardImplInfo says `deterministic` is
// held to it.
INSTANTIATE_TEST_SUITE_P(DeterministicImpls, Deterministic,
                         ::testing::ValuesIn(deterministic_impls<Space>()), impl_test_name);

// --- edge cases of the raw-pointer API -----------------------------------------

class RawPointerEdges : public ::testing::TestWithParam<std::string> {};

// With B = 0 the arrays of B·T rows are empty, so their pointers may be null;
// dweight and dbias are sums over no rows and stay as they were.
TEST_P(RawPointerEdges, NullPointersForEmptyArrays) {
  const HostProblem p = make_problem({"B0", 0, 3, 4, 5});
  const DeviceProblem<Space> d(p);
  llmk::MatmulBackwardOptions options;
  options.impl = GetParam();
  const Space exec;
  llmk::matmul_backward(exec, nullptr, d.dweight.data(), d.dbias.data(), nullptr, nullptr,
                        d.weight.data(), 0, 3, 4, 5, options);
  exec.fence();
  Results r;
  ASSERT_TRUE(download_results(d, p, r));
  EXPECT_TRUE(bitwise_equal("dweight", r.dweight, p.dweight));
  EXPECT_TRUE(bitwise_equal("dbias", r.dbias, p.dbias));
}

INSTANTIATE_TEST_SUITE_P(AllImpls, RawPointerEdges,
                         ::testing::ValuesIn(impls_under_test<Space>()), impl_test_name);

// --- what the library says about its implementations ----------------------------

// "auto" is the first implementation of the list that is available here.
TEST(Impls, AutoIsTheFirstAvailable) {
  const std::string chosen = llmk::matmul_backward_auto_impl<Space>();
  EXPECT_TRUE(llmk::matmul_backward_available<Space>(chosen)) << chosen;
  EXPECT_TRUE(llmk::matmul_backward_available<Space>("auto"));
  std::string first;
  for (const llmk::MatmulBackwardImplInfo& info : llmk::matmul_backward_impls())
    if (first.empty() && llmk::matmul_backward_available<Space>(info.name)) first = info.name;
  EXPECT_EQ(chosen, first);
}

// Names are unique and lower case; an implementation that is not compiled in
// is available nowhere; naive and the portable kernels are there everywhere.
TEST(Impls, ListIsConsistent) {
  const auto& impls = llmk::matmul_backward_impls();
  ASSERT_FALSE(impls.empty());
  std::set<std::string> names;
  for (const llmk::MatmulBackwardImplInfo& info : impls) {
    SCOPED_TRACE(info.name);
    EXPECT_TRUE(names.insert(info.name).second) << "duplicate name";
    EXPECT_NE(info.name, "auto");
    for (const unsigned char ch : info.name)
      EXPECT_TRUE(std::islower(ch) || std::isdigit(ch) || ch == '_') << ch;
    EXPECT_FALSE(info.dbias.empty());
    if (!info.compiled) EXPECT_FALSE(llmk::matmul_backward_available<Space>(info.name));
  }
  for (const char* portable : {"naive", "team", "tiled"}) {
    EXPECT_EQ(names.count(portable), 1u) << portable;
    EXPECT_TRUE(llmk::matmul_backward_available<Space>(portable)) << portable;
  }
}

// --- contexts and workspaces -------------------------------------------------------

// A shape with work for every kernel (several tiles, chunks and dbias segments).
Shape workspace_shape() { return {"ws", 3, 347, 201, 531}; }

class Workspace : public ::testing::TestWithParam<std::string> {};

// Results through an explicit Context (allocating its workspace), through the
// implicit context, and through a Context given exactly
// matmul_backward_workspace_bytes of user memory: all bitwise equal.
TEST_P(Workspace, UserWorkspaceGivesTheSameResults) {
  const std::string impl = GetParam();
  const HostProblem p = make_problem(workspace_shape());
  const Space exec;
  llmk::MatmulBackwardOptions options;
  options.impl = impl;
  const std::size_t bytes = llmk::matmul_backward_workspace_bytes<Space>(
      p.shape.M(), p.shape.C, p.shape.OC, p.shape.bias, options);
  std::printf("%s: workspace %zu bytes\n", impl.c_str(), bytes);

  Results allocating, implicit, user;
  {
    llmk::Context<Space> ctx(exec);
    const DeviceProblem<Space> d(p);
    run_matmul_backward(d, Entry::Rank2Views, impl, &ctx);
    ASSERT_TRUE(download_results(d, p, allocating));
    EXPECT_GE(ctx.workspace_bytes(), bytes) << "the context holds less than the call needs";
  }
  expect_matches_reference(allocating, reference_backward(p), p.shape);
  {
    const DeviceProblem<Space> d(p);
    run_matmul_backward(d, Entry::Rank2Views, impl);
    ASSERT_TRUE(download_results(d, p, implicit));
  }
  EXPECT_TRUE(bitwise_equal(implicit, allocating)) << "implicit context";
  {
    // The user's buffer, between guard bytes that must stay as they were.
    constexpr std::size_t guard = 256;
    Kokkos::View<unsigned char*, typename Space::device_type> buffer("user workspace",
                                                                     bytes + 2 * guard);
    Kokkos::deep_copy(buffer, (unsigned char)0xa5);
    llmk::Context<Space> ctx(exec);
    ctx.use_workspace(bytes ? buffer.data() + guard : nullptr, bytes);
    EXPECT_EQ(ctx.workspace_bytes(), bytes);
    const DeviceProblem<Space> d(p);
    run_matmul_backward(d, Entry::Rank2Views, impl, &ctx);
    ASSERT_TRUE(download_results(d, p, user));
    EXPECT_EQ(ctx.workspace_bytes(), bytes) << "the context allocated instead of using the buffer";
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), buffer);
    for (std::size_t i = 0; i < guard; ++i) {
      ASSERT_EQ(h(i), 0xa5) << "byte " << i << " before the workspace changed";
      ASSERT_EQ(h(guard + bytes + i), 0xa5) << "byte " << i << " after the workspace changed";
    }
  }
  EXPECT_TRUE(bitwise_equal(user, allocating)) << "user workspace";
}

// A user workspace one byte too small: std::invalid_argument saying so, before
// any output is written. (An implementation that needs no workspace for its
// products still needs one for dbias when C = 0: the shared column sums.)
TEST_P(Workspace, TooSmallUserWorkspaceThrowsBeforeAnyWrite) {
  const std::string impl = GetParam();
  llmk::MatmulBackwardOptions options;
  options.impl = impl;
  const auto bytes_of = [&](const Shape& s) {
    return llmk::matmul_backward_workspace_bytes<Space>(s.M(), s.C, s.OC, s.bias, options);
  };
  Shape shape = workspace_shape();
  if (bytes_of(shape) == 0) shape.C = 0;
  const std::size_t bytes = bytes_of(shape);
  if (bytes == 0) GTEST_SKIP() << impl << " needs no workspace";
  const HostProblem p = make_problem(shape);
  Kokkos::View<unsigned char*, typename Space::device_type> buffer("user workspace", bytes);
  llmk::Context<Space> ctx{Space()};
  ctx.use_workspace(buffer.data(), bytes - 1);
  const DeviceProblem<Space> d(p);
  try {
    run_matmul_backward(d, Entry::Rank2Views, impl, &ctx);
    ADD_FAILURE() << "no exception thrown";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("workspace"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr(std::to_string(bytes - 1)));
    EXPECT_THAT(e.what(), ::testing::HasSubstr(std::to_string(bytes)));
  }
  Results r;
  ASSERT_TRUE(download_results(d, p, r));
  EXPECT_TRUE(bitwise_equal("dinp", r.dinp, p.dinp));
  EXPECT_TRUE(bitwise_equal("dweight", r.dweight, p.dweight));
  EXPECT_TRUE(bitwise_equal("dbias", r.dbias, p.dbias));
  // The same context with enough memory then works.
  ctx.use_workspace(buffer.data(), bytes);
  run_matmul_backward(d, Entry::Rank2Views, impl, &ctx);
  ASSERT_TRUE(download_results(d, p, r));
  expect_matches_reference(r, reference_backward(p), p.shape);
}

// A call with no rows needs no workspace and runs with none.
TEST_P(Workspace, EmptyProblemNeedsNone) {
  llmk::MatmulBackwardOptions options;
  options.impl = GetParam();
  EXPECT_EQ(llmk::matmul_backward_workspace_bytes<Space>(0, 8, 16, true, options), 0u);
  EXPECT_EQ(llmk::matmul_backward_workspace_bytes<Space>(8, 8, 0, true, options), 0u);
}

INSTANTIATE_TEST_SUITE_P(AllImpls, Workspace, ::testing::ValuesIn(impls_under_test<Space>()),
                         impl_test_name);

// --- precisions, GELU, overwrite -----------------------------------------------
// Every implementation × every precision configuration its info declares (tf32:
// those with info.tf32) × precision_shapes() × GELU off and on, against the
// float64 reference with the precision's tolerances (reference/compare.hpp).
// The problems hold bf16-representable values where the type is bf16; bf16
// results are widened to float on the host (support/device.hpp).

struct PrecisionCase {
  std::string impl;
  Precision precision;
  Shape shape;
  bool gelu;
  Entry entry;
};

void PrintTo(const PrecisionCase& c, std::ostream* os) {
  *os << c.impl << " " << precision_name(c.precision) << " on " << c.shape.name << " (B="
      << c.shape.B << ", T=" << c.shape.T << ", C=" << c.shape.C << ", OC=" << c.shape.OC
      << (c.shape.bias ? "" : ", no bias") << ")" << (c.gelu ? " with GELU" : "");
}

const char* entry_name(Entry e) {
  return e == Entry::Rank2Views ? "rank2" : e == Entry::Rank3Views ? "rank3" : "raw";
}

// The entry point cycles with the shape, so that each implementation and
// precision goes through all three.
std::vector<PrecisionCase> precision_cases() {
  std::vector<PrecisionCase> cases;
  const Entry entries[] = {Entry::Rank2Views, Entry::Rank3Views, Entry::RawPointers};
  for (const ImplPrecision& ip : impl_precisions<Space>()) {
    int i = 0;
    for (const Shape& shape : precision_shapes())
      for (bool gelu : {false, true}) {
        // Plain fp32 without GELU is the AllImpls suite's.
        if (ip.precision == Precision::fp32 && !gelu) continue;
        cases.push_back({ip.impl, ip.precision, shape, gelu, entries[i++ % 3]});
      }
  }
  return cases;
}

std::string precision_case_name(const ::testing::TestParamInfo<PrecisionCase>& info) {
  const PrecisionCase& c = info.param;
  return c.impl + "_" + precision_test_name(c.precision) + "_" + c.shape.name +
         (c.gelu ? "_gelu_" : "_") + entry_name(c.entry);
}

class MatmulBackwardPrecision : public ::testing::TestWithParam<PrecisionCase> {};

TEST_P(MatmulBackwardPrecision, MatchesReference) {
  const PrecisionCase& c = GetParam();
  const HostProblem p = make_problem(c.shape, 2024, {c.precision, c.gelu});
  const DeviceProblem<Space> d(p);
  run_matmul_backward(d, c.entry, options_for(c.impl, c.precision));
  Results r;
  ASSERT_TRUE(download_results(d, p, r));
  expect_matches_reference(r, reference_backward(p), c.shape, c.precision,
                           rounds_once<Space>(c.impl, c.precision));
}

INSTANTIATE_TEST_SUITE_P(AllImpls, MatmulBackwardPrecision, ::testing::ValuesIn(precision_cases()),
                         precision_case_name);

// Overwrite (Update::overwrite), output by output and all three at once, GELU
// off and on: the overwritten outputs start as poison (NaN, ±Inf, 1e30 in
// turn) that must not reach the results (they must come back finite and
// equal to the gradient alone), the others accumulate as usual. On the
// shapes of zero size too: an overwritten output that has elements is still
// written (zeros, or Σ dout for dbias with C = 0).
struct OverwriteCase {
  std::string impl;
  Precision precision;
  bool gelu;
};

void PrintTo(const OverwriteCase& c, std::ostream* os) {
  *os << c.impl << " " << precision_name(c.precision) << (c.gelu ? " with GELU" : "");
}

std::vector<OverwriteCase> overwrite_cases() {
  std::vector<OverwriteCase> cases;
  for (const ImplPrecision& ip : impl_precisions<Space>())
    for (bool gelu : {false, true}) cases.push_back({ip.impl, ip.precision, gelu});
  return cases;
}

std::string overwrite_case_name(const ::testing::TestParamInfo<OverwriteCase>& info) {
  return info.param.impl + "_" + precision_test_name(info.param.precision) +
         (info.param.gelu ? "_gelu" : "");
}

void poison(std::vector<float>& v) {
  const float values[] = {std::numeric_limits<float>::quiet_NaN(),
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(), 1e30f};
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = values[i % 4];
}

class Overwrite : public ::testing::TestWithParam<OverwriteCase> {};

TEST_P(Overwrite, IgnoresPoisonedOutputs) {
  const OverwriteCase& c = GetParam();
  std::vector<Shape> shapes = {{"odd", 3, 5, 7, 11}, {"mid", 5, 37, 129, 65},
                               {"nobias", 2, 7, 9, 5, false}};
  for (const Shape& s : empty_shapes()) shapes.push_back(s);
  const Updates updates[] = {{true, false, false}, {false, true, false}, {false, false, true},
                             {true, true, true}};
  for (const Shape& shape : shapes) {
    const HostProblem p = make_problem(shape, 7, {c.precision, c.gelu});
    for (const Updates& u : updates) {
      SCOPED_TRACE(shape.name + ": overwrite" + (u.overwrite_dinp ? " dinp" : "") +
                   (u.overwrite_dweight ? " dweight" : "") + (u.overwrite_dbias ? " dbias" : ""));
      HostProblem poisoned = p;
      if (u.overwrite_dinp) poison(poisoned.dinp);
      if (u.overwrite_dweight) poison(poisoned.dweight);
      if (u.overwrite_dbias) poison(poisoned.dbias);
      const DeviceProblem<Space> d(poisoned);
      run_matmul_backward(d, Entry::Rank2Views, options_for(c.impl, c.precision, u));
      Results r;
      ASSERT_TRUE(download_results(d, poisoned, r));
      // The reference from the clean problem: overwritten outputs ignore their
      // initial values, so every element is finite and must come back so.
      const Gradients64 ref = reference_backward(p, llmk::reference::Method::Auto, 0, u);
      expect_matches_reference(r, ref, shape, c.precision,
                               rounds_once<Space>(c.impl, c.precision));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllImpls, Overwrite, ::testing::ValuesIn(overwrite_cases()),
                         overwrite_case_name);

// NaN in every precision: in dout as in the fp32 test above (its dinp row,
// dweight row and dbias element), and in pre_gelu (its dinp element only).
class NanPrecision : public ::testing::TestWithParam<ImplPrecision> {};

TEST_P(NanPrecision, InDoutReachesItsRowsAndBiasOnly) {
  const ImplPrecision& c = GetParam();
  const Shape s{"nan", 2, 9, 24, 40};
  const std::int64_t m0 = 11, o0 = 17;
  for (bool gelu : {false, true}) {
    SCOPED_TRACE(gelu ? "with GELU" : "without GELU");
    HostProblem p = make_problem(s, 2024, {c.precision, gelu});
    p.dout[m0 * s.OC + o0] = std::numeric_limits<float>::quiet_NaN();
    const DeviceProblem<Space> d(p);
    run_matmul_backward(d, Entry::Rank2Views, options_for(c.impl, c.precision));
    Results r;
    ASSERT_TRUE(download_results(d, p, r));
    EXPECT_EQ(nan_positions(r.dinp), row_positions(m0, s.C)) << "NaN elements of dinp";
    EXPECT_EQ(nan_positions(r.dweight), row_positions(o0, s.C)) << "NaN elements of dweight";
    EXPECT_EQ(nan_positions(r.dbias), std::vector<std::int64_t>{o0}) << "NaN elements of dbias";
    expect_matches_reference(r, reference_backward(p), s, c.precision,
                             rounds_once<Space>(c.impl, c.precision));
  }
}

TEST_P(NanPrecision, InPreGeluReachesItsDinpElementOnly) {
  const ImplPrecision& c = GetParam();
  const Shape s{"nan", 2, 9, 24, 40};
  const std::int64_t m0 = 5, c0 = 19;
  HostProblem p = make_problem(s, 2024, {c.precision, true});
  p.pre_gelu[m0 * s.C + c0] = std::numeric_limits<float>::quiet_NaN();
  for (bool overwrite : {false, true}) {
    SCOPED_TRACE(overwrite ? "dinp overwritten" : "dinp accumulated");
    const DeviceProblem<Space> d(p);
    run_matmul_backward(d, Entry::Rank2Views,
                        options_for(c.impl, c.precision, {overwrite, false, false}));
    Results r;
    ASSERT_TRUE(download_results(d, p, r));
    EXPECT_EQ(nan_positions(r.dinp), std::vector<std::int64_t>{m0 * s.C + c0})
        << "NaN elements of dinp";
    EXPECT_TRUE(nan_positions(r.dweight).empty()) << "dweight does not depend on pre_gelu";
    EXPECT_TRUE(nan_positions(r.dbias).empty()) << "dbias does not depend on pre_gelu";
    expect_matches_reference(r, reference_backward(p, llmk::reference::Method::Auto, 0,
                                                   {overwrite, false, false}),
                             s, c.precision, rounds_once<Space>(c.impl, c.precision));
  }
}

INSTANTIATE_TEST_SUITE_P(AllImpls, NanPrecision, ::testing::ValuesIn(impl_precisions<Space>()),
                         impl_precision_name);

// Determinism in every precision (GELU on, dinp overwritten as llm.c does):
// bitwise identical results from run to run for each implementation that
// declares itself deterministic.
class DeterministicPrecision : public ::testing::TestWithParam<ImplPrecision> {};

TEST_P(DeterministicPrecision, BitwiseIdenticalRuns) {
  const ImplPrecision& c = GetParam();
  // Remainders everywhere, several tiles and dbias row segments.
  const HostProblem p = make_problem({"det", 2, 129, 67, 261}, 2024, {c.precision, true});
  Results first;
  for (int run = 0; run < 3; ++run) {
    const DeviceProblem<Space> d(p);
    run_matmul_backward(d, Entry::Rank2Views, options_for(c.impl, c.precision, {true, false, false}));
    Results r;
    ASSERT_TRUE(download_results(d, p, r));
    if (run == 0) {
      first = r;
      expect_matches_reference(r, reference_backward(p, llmk::reference::Method::Auto, 0,
                                                     {true, false, false}),
                               p.shape, c.precision, rounds_once<Space>(c.impl, c.precision));
      continue;
    }
    EXPECT_TRUE(bitwise_equal(r, first)) << "run " << run;
  }
}

INSTANTIATE_TEST_SUITE_P(DeterministicImpls, DeterministicPrecision,
                         ::testing::ValuesIn(impl_precisions<Space>(true, true)),
                         impl_precision_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(DeterministicPrecision);

// A user workspace of exactly matmul_backward_workspace_bytes for the call's
// precision and GELU gives the results of the implicit context; one byte less
// throws before any write.
class WorkspacePrecision : public ::testing::TestWithParam<ImplPrecision> {};

TEST_P(WorkspacePrecision, ExactBytesSuffice) {
  const ImplPrecision& c = GetParam();
  const HostProblem p = make_problem({"ws", 2, 129, 67, 261}, 2024, {c.precision, true});
  const llmk::MatmulBackwardOptions options = options_for(c.impl, c.precision);
  const std::string config =
      precision_name(c.precision == Precision::tf32 ? Precision::fp32 : c.precision);
  const std::size_t bytes = llmk::matmul_backward_workspace_bytes<Space>(
      p.shape.M(), p.shape.C, p.shape.OC, p.shape.bias, options, config, true);
  Results implicit, user;
  {
    const DeviceProblem<Space> d(p);
    run_matmul_backward(d, Entry::Rank2Views, options);
    ASSERT_TRUE(download_results(d, p, implicit));
  }
  expect_matches_reference(implicit, reference_backward(p), p.shape, c.precision);
  Kokkos::View<unsigned char*, typename Space::device_type> buffer("user workspace", bytes + 1);
  llmk::Context<Space> ctx{Space()};
  if (bytes > 0) {
    ctx.use_workspace(buffer.data(), bytes - 1);
    const DeviceProblem<Space> d(p);
    EXPECT_THROW(run_matmul_backward(d, Entry::Rank2Views, options, &ctx), std::invalid_argument);
    Results r;
    ASSERT_TRUE(download_results(d, p, r));
    EXPECT_TRUE(bitwise_equal("dinp", r.dinp, p.dinp));
    EXPECT_TRUE(bitwise_equal("dweight", r.dweight, p.dweight));
    EXPECT_TRUE(bitwise_equal("dbias", r.dbias, p.dbias));
  }
  ctx.use_workspace(bytes ? buffer.data() : nullptr, bytes);
  const DeviceProblem<Space> d(p);
  run_matmul_backward(d, Entry::Rank2Views, options, &ctx);
  ASSERT_TRUE(download_results(d, p, user));
  EXPECT_EQ(ctx.workspace_bytes(), bytes) << "the context allocated instead of using the buffer";
  if (impl_info(c.impl) && impl_info(c.impl)->deterministic)
    EXPECT_TRUE(bitwise_equal(user, implicit));
  else
    expect_matches_reference(user, reference_backward(p), p.shape, c.precision);
}

INSTANTIATE_TEST_SUITE_P(AllImpls, WorkspacePrecision,
                         ::testing::ValuesIn(impl_precisions<Space>(true)), impl_precision_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(WorkspacePrecision);

// What the infos say about precisions: each implementation declares known
// configurations, at least fp32; every configuration runs on every space
// (some available implementation declares it), and "auto" stands for the
// first available implementation that declares it (and for tf32, has it).
TEST(Impls, PrecisionsAreDeclaredAndAutoFollowsThem) {
  const std::vector<std::string>& configs = llmk::matmul_backward_precisions();
  EXPECT_EQ(configs, (std::vector<std::string>{"fp32", "bf16", "bf16-fp32grad"}));
  for (const llmk::MatmulBackwardImplInfo& info : llmk::matmul_backward_impls()) {
    SCOPED_TRACE(info.name);
    EXPECT_FALSE(info.precisions.empty());
    for (const std::string& p : info.precisions)
      EXPECT_NE(std::find(configs.begin(), configs.end(), p), configs.end()) << p;
    EXPECT_TRUE(declares(info, Precision::fp32));
    EXPECT_TRUE(info.gelu == "fused" || info.gelu == "separate") << info.gelu;
  }
  for (Precision p : all_precisions()) {
    SCOPED_TRACE(precision_name(p));
    std::string first;
    for (const llmk::MatmulBackwardImplInfo& info : llmk::matmul_backward_impls())
      if (first.empty() && llmk::matmul_backward_available<Space>(info.name) && declares(info, p))
        first = info.name;
    const std::string config = precision_name(p == Precision::tf32 ? Precision::fp32 : p);
    const llmk::Math math = p == Precision::tf32 ? llmk::Math::tf32 : llmk::Math::fp32;
    if (p != Precision::tf32) EXPECT_FALSE(first.empty()) << "no implementation runs it here";
    if (first.empty()) {
      // tf32 on a space without TF32: "auto" stands for nothing (an empty
      // name, or std::invalid_argument), and a call asking for it throws.
      try {
        EXPECT_EQ(llmk::matmul_backward_auto_impl<Space>(config, math), "");
      } catch (const std::invalid_argument&) {
      }
    } else {
      EXPECT_EQ(llmk::matmul_backward_auto_impl<Space>(config, math), first);
    }
  }
}

// --- the seed's shape (label `large`: slow on a CPU) -------------------------

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// One test per implementation, so that CTest runs them in parallel and reports
// each one's time; the float64 reference takes a few seconds of each.
class MatmulBackwardLarge : public ::testing::TestWithParam<std::string> {};

TEST_P(MatmulBackwardLarge, SeedShape) {
  // The naive kernels gather a strided column per output element: at this
  // shape they take 10 (OpenMP) to 20 (Serial) minutes on 2 cores, and their
  // loops are the same at every size, so by default they are left out here.
  if (is_host_space<Space> && GetParam() == "naive" && !std::getenv("LLMK_TEST_SLOW"))
    GTEST_SKIP() << "naive on a CPU takes 10-20 minutes here; set LLMK_TEST_SLOW=1 to run it";
  const Shape s = seed_shape();
  const HostProblem p = make_problem(s);
  auto t0 = std::chrono::steady_clock::now();
  const Gradients64 ref = reference_backward(p);
  std::printf("float64 reference (%s): %.1f s\n",
              llmk::reference::method_name(llmk::reference::Method::Auto, s), seconds_since(t0));
  const DeviceProblem<Space> d(p);
  t0 = std::chrono::steady_clock::now();
  run_matmul_backward(d, Entry::Rank3Views, GetParam());
  std::printf("%s on %s: %.2f s\n", GetParam().c_str(),
              Space::name(), seconds_since(t0));
  Results r;
  ASSERT_TRUE(download_results(d, p, r));
  expect_matches_reference(r, ref, s);
}

INSTANTIATE_TEST_SUITE_P(AllImpls, MatmulBackwardLarge,
                         ::testing::ValuesIn(impls_under_test<Space>()), impl_test_name);

}  // namespace
