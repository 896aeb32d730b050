// Backends against each other, in one binary, on the same inputs: each
// implementation of the backend under test against the same implementation on
// the reference backend (or, when the reference backend lacks it, against its
// "auto"). OpenMP against Serial; Cuda against OpenMP when Kokkos has Cuda.
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
Results run_on(const HostProblem& p, const std::string& impl) {
  const DeviceProblem<Space> d(p);
  run_matmul_backward(d, Entry::Rank2Views, impl);
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
  const Results tested = run_on<Tested>(p, c.impl);
  const Results reference = run_on<Reference>(p, ref_impl);
  SCOPED_TRACE(std::string(Tested::name()) + " " + c.impl + " against " + Reference::name() +
               " " + ref_impl);
  EXPECT_TRUE(matches_reference("dinp", tested.dinp, reference.dinp, c.shape.C,
                                kFloat32PairTolerance));
  EXPECT_TRUE(matches_reference("dweight", tested.dweight, reference.dweight, c.shape.C,
                                kFloat32PairTolerance));
  EXPECT_TRUE(matches_reference("dbias", tested.dbias, reference.dbias, 0, kFloat32PairTolerance));
}

#if defined(KOKKOS_ENABLE_OPENMP) && defined(KOKKOS_ENABLE_SERIAL)
class OpenMPvsSerial : public ::testing::TestWithParam<Case> {};
TEST_P(OpenMPvsSerial, Agree) { expect_agree<Kokkos::OpenMP, Kokkos::Serial>(GetParam()); }
INSTANTIATE_TEST_SUITE_P(AllImpls, OpenMPvsSerial, ::testing::ValuesIn(cases<Kokkos::OpenMP>()),
                         case_name);
#endif

#if defined(KOKKOS_ENABLE_CUDA) && defined(KOKKOS_ENABLE_OPENMP)
class CudaVsOpenMP : public ::testing::TestWithParam<Case> {};
TEST_P(CudaVsOpenMP, Agree) { expect_agree<Kokkos::Cuda, Kokkos::OpenMP>(GetParam()); }
INSTANTIATE_TEST_SUITE_P(AllImpls, CudaVsOpenMP, ::testing::ValuesIn(cases<Kokkos::Cuda>()),
                         case_name);
#endif

}  // namespace
