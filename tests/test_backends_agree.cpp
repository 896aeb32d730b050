// Backends against each other, in one binary, on the same inputs: each
// implementation of the backend under test against the same implementation on
// the reference backend (or, when the reference backend lacks it, against its
// "auto"). OpenMP against Serial; Cuda against OpenMP when Kokkos has Cuda.
// In fp32 on the generic suite's shapes, then in every other precision
// (bf16, bf16-fp32grad, tf32 where an implementation has it) with GELU.
#include "support/compare.hpp"
#include "support/device.hpp"
#include "support/problem.hpp"

#include <gtest/gtest.h>
#include <llmk/matmul_backward.hpp>

#include <string>
#include <vector>

namespace {

using namespace llmk_test;

// The shapes: a subset of the generic suite's, the zero-sized ones aside.
std::vector<Shape> agree_shapes() {
  std::vector<Shape> shapes;
  for (const Shape& s : test_shapes())
    if (s.M() > 0 && s.C > 0 && s.OC > 0) shapes.push_back(s);
  return shapes;
}

struct Case {
  std::string impl;
  Shape shape;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.impl << " on " << c.shape.name;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return info.param.impl + "_" + info.param.shape.name;
}

template <class Space>
std::vector<Case> cases() {
  std::vector<Case> all;
  for (const std::string& impl : impls_under_test<Space>())
    for (const Shape& s : agree_shapes()) all.push_back({impl, s});
  return all;
}

template <class Space>
Results run_on(const HostProblem& p, const llmk::MatmulBackwardOptions& options) {
  const DeviceProblem<Space> d(p);
  run_matmul_backward(d, Entry::Rank2Views, options);
  Results r;
  EXPECT_TRUE(download_results(d, p, r)) << Space::name();
  return r;
}

// Tested's result within kFloat32PairTolerance of Reference's, element for
// element finite where it is.
template <class Tested, class Reference>
void expect_agree(const Case& c) {
  const HostProblem p = make_problem(c.shape);
  const std::string ref_impl =
      llmk::matmul_backward_available<Reference>(c.impl) ? c.impl : std::string("auto");
  const Results tested = run_on<Tested>(p, options_for(c.impl, Precision::fp32));
  const Results reference = run_on<Reference>(p, options_for(ref_impl, Precision::fp32));
  SCOPED_TRACE(std::string(Tested::name()) + " " + c.impl + " against " + Reference::name() +
               " " + ref_impl);
  EXPECT_TRUE(matches_reference("dinp", tested.dinp, reference.dinp, c.shape.C,
                                kFloat32PairTolerance));
  EXPECT_TRUE(matches_reference("dweight", tested.dweight, reference.dweight, c.shape.C,
                                kFloat32PairTolerance));
  EXPECT_TRUE(matches_reference("dbias", tested.dbias, reference.dbias, 0, kFloat32PairTolerance));
}

// --- every precision ------------------------------------------------------------
// Each implementation × each precision other than plain fp32 that it declares
// on the tested backend (tf32: with info.tf32), GELU on, against the same
// implementation on the reference backend when that one runs the precision
// there, else its "auto" for it; tf32 against fp32 math on the reference
// backend (a host backend has no TF32). Within the sum of the two sides'
// tolerances (reference/compare.hpp): two bf16 results each within
// kBf16Tolerance of the exact one are within twice that of each other.

struct PrecisionCase {
  std::string impl;
  Precision precision;
  Shape shape;
};

void PrintTo(const PrecisionCase& c, std::ostream* os) {
  *os << c.impl << " " << precision_name(c.precision) << " on " << c.shape.name << " with GELU";
}

std::string precision_case_name(const ::testing::TestParamInfo<PrecisionCase>& info) {
  return info.param.impl + "_" + precision_test_name(info.param.precision) + "_" +
         info.param.shape.name;
}

template <class Space>
std::vector<PrecisionCase> precision_cases() {
  const Shape shapes[] = {{"odd", 3, 5, 7, 11}, {"mid", 5, 37, 129, 65}, {"longM", 3, 700, 3, 7},
                          {"longOC", 1, 5, 3, 2050}};
  std::vector<PrecisionCase> all;
  for (const ImplPrecision& ip : impl_precisions<Space>(true))
    for (const Shape& s : shapes) all.push_back({ip.impl, ip.precision, s});
  return all;
}

template <class Tested, class Reference>
void expect_agree_in(const PrecisionCase& c) {
  const HostProblem p = make_problem(c.shape, 2024, {c.precision, true});
  const Precision ref_precision = c.precision == Precision::tf32 ? Precision::fp32 : c.precision;
  const std::string ref_impl = impl_runs<Reference>(c.impl, ref_precision) ? c.impl : "auto";
  const Results tested = run_on<Tested>(p, options_for(c.impl, c.precision));
  const Results reference = run_on<Reference>(p, options_for(ref_impl, ref_precision));
  SCOPED_TRACE(std::string(Tested::name()) + " " + c.impl + " " + precision_name(c.precision) +
               " against " + Reference::name() + " " + ref_impl + " " +
               precision_name(ref_precision));
  const auto tol = [&](Output o) {
    return tolerance(c.precision, o) + tolerance(ref_precision, o);
  };
  EXPECT_TRUE(matches_reference("dinp", tested.dinp, reference.dinp, c.shape.C, tol(Output::dinp)));
  EXPECT_TRUE(matches_reference("dweight", tested.dweight, reference.dweight, c.shape.C,
                                tol(Output::dweight)));
  EXPECT_TRUE(matches_reference("dbias", tested.dbias, reference.dbias, 0, tol(Output::dbias)));
}

#if defined(KOKKOS_ENABLE_OPENMP) && defined(KOKKOS_ENABLE_SERIAL)
class OpenMPvsSerial : public ::testing::TestWithParam<Case> {};
TEST_P(OpenMPvsSerial, Agree) { expect_agree<Kokkos::OpenMP, Kokkos::Serial>(GetParam()); }
INSTANTIATE_TEST_SUITE_P(AllImpls, OpenMPvsSerial, ::testing::ValuesIn(cases<Kokkos::OpenMP>()),
                         case_name);

class OpenMPvsSerialPrecision : public ::testing::TestWithParam<PrecisionCase> {};
TEST_P(OpenMPvsSerialPrecision, Agree) {
  expect_agree_in<Kokkos::OpenMP, Kokkos::Serial>(GetParam());
}
INSTANTIATE_TEST_SUITE_P(AllImpls, OpenMPvsSerialPrecision,
                         ::testing::ValuesIn(precision_cases<Kokkos::OpenMP>()),
                         precision_case_name);
#endif

#if defined(KOKKOS_ENABLE_CUDA) && defined(KOKKOS_ENABLE_OPENMP)
class CudaVsOpenMP : public ::testing::TestWithParam<Case> {};
TEST_P(CudaVsOpenMP, Agree) { expect_agree<Kokkos::Cuda, Kokkos::OpenMP>(GetParam()); }
INSTANTIATE_TEST_SUITE_P(AllImpls, CudaVsOpenMP, ::testing::ValuesIn(cases<Kokkos::Cuda>()),
                         case_name);

class CudaVsOpenMPPrecision : public ::testing::TestWithParam<PrecisionCase> {};
TEST_P(CudaVsOpenMPPrecision, Agree) { expect_agree_in<Kokkos::Cuda, Kokkos::OpenMP>(GetParam()); }
INSTANTIATE_TEST_SUITE_P(AllImpls, CudaVsOpenMPPrecision,
                         ::testing::ValuesIn(precision_cases<Kokkos::Cuda>()),
                         precision_case_name);
#endif

}  // namespace
