// The generic suite, compiled once per Kokkos execution space: the build
// defines LLMK_TEST_SPACE (Serial, OpenMP, Cuda) and names the binary after it.
// Every implementation available on the space, and Impl::Auto, against the
// float64 reference, through each of the three entry points.
#include "support/compare.hpp"
#include "support/device.hpp"
#include "support/problem.hpp"
#include "support/reference.hpp"

#include <gtest/gtest.h>
#include <llmk/matmul_backward.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <ostream>
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
  llmk::Impl impl;
  Shape shape;
};

// How gtest prints a Case (instead of its bytes).
void PrintTo(const Case& c, std::ostream* os) {
  *os << llmk::impl_name(c.impl) << " on " << c.shape.name << " (B=" << c.shape.B
      << ", T=" << c.shape.T << ", C=" << c.shape.C << ", OC=" << c.shape.OC
      << (c.shape.bias ? "" : ", no bias") << ")";
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (llmk::Impl impl : impls_under_test<Space>())
    for (const Shape& shape : test_shapes()) cases.push_back({impl, shape});
  return cases;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return std::string(llmk::impl_name(info.param.impl)) + "_" + info.param.shape.name;
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

class NanInDout : public ::testing::TestWithParam<llmk::Impl> {};

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

class Deterministic : public ::testing::TestWithParam<llmk::Impl> {};

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

// The portable implementations promise determinism; the vendor libraries
// (OpenBLAS, cuBLAS) make no such promise, so they are not held to it.
std::vector<llmk::Impl> portable_impls() {
  std::vector<llmk::Impl> impls;
  for (llmk::Impl impl : {llmk::Impl::Naive, llmk::Impl::Team, llmk::Impl::Tiled})
    if (llmk::impl_available<Space>(impl)) impls.push_back(impl);
  return impls;
}

INSTANTIATE_TEST_SUITE_P(PortableImpls, Deterministic, ::testing::ValuesIn(portable_impls()),
                         impl_test_name);

// --- edge cases of the raw-pointer API -----------------------------------------

class RawPointerEdges : public ::testing::TestWithParam<llmk::Impl> {};

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

TEST(Impls, AutoResolvesToAnAvailableImplementation) {
  const llmk::Impl impl = llmk::resolve_auto<Space>();
  EXPECT_NE(impl, llmk::Impl::Auto);
  EXPECT_TRUE(llmk::impl_available<Space>(impl)) << llmk::impl_name(impl);
  EXPECT_EQ(llmk::backend_name<Space>(), Space::name());
}

// --- the seed's shape (label `large`: slow on a CPU) -------------------------

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// One test per implementation, so that CTest runs them in parallel and reports
// each one's time; the float64 reference takes a few seconds of each.
class MatmulBackwardLarge : public ::testing::TestWithParam<llmk::Impl> {};

TEST_P(MatmulBackwardLarge, SeedShape) {
  // The naive kernels gather a strided column per output element: at this
  // shape they take 10 (OpenMP) to 20 (Serial) minutes on 2 cores, and their
  // loops are the same at every size, so by default they are left out here.
  constexpr bool host_space =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, Space::memory_space>::accessible;
  if (host_space && GetParam() == llmk::Impl::Naive && !std::getenv("LLMK_TEST_SLOW"))
    GTEST_SKIP() << "naive on a CPU takes 10-20 minutes here; set LLMK_TEST_SLOW=1 to run it";
  const Shape s = seed_shape();
  const HostProblem p = make_problem(s);
  auto t0 = std::chrono::steady_clock::now();
  const Gradients64 ref = reference_backward(p);
  std::printf("float64 reference: %.1f s\n", seconds_since(t0));
  const DeviceProblem<Space> d(p);
  t0 = std::chrono::steady_clock::now();
  run_matmul_backward(d, Entry::Rank3Views, GetParam());
  std::printf("%s on %s: %.2f s\n", std::string(llmk::impl_name(GetParam())).c_str(),
              Space::name(), seconds_since(t0));
  Results r;
  ASSERT_TRUE(download_results(d, p, r));
  expect_matches_reference(r, ref, s);
}

INSTANTIATE_TEST_SUITE_P(AllImpls, MatmulBackwardLarge,
                         ::testing::ValuesIn(impls_under_test<Space>()), impl_test_name);

}  // namespace
