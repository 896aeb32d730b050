// ops/classifier_backward/kernels.hpp's fused kernel (ClassifierRows) through
// tunings other than the shipped one, against the float64 reference, on
// every space of the build: on a host teams of two threads (OpenMP; Serial
// has one thread and skips), so that each row's online (max, sum) pairs of
// two "warps" are merged in team scratch, as on a GPU (the shipped host
// tuning has one thread a team and never merges), with 1 to 3 packs in
// flight, 16- and 8-byte packs and elements one by one, one lane a thread
// and 4; on Cuda 2 warps of 32 lanes. Rows start with their largest logits in one thread's
// half and not the other's, so a merge that ignores the maxima fails.
#include "support/classifier_device.hpp"
#include "support/test_space.hpp"

#include <gtest/gtest.h>
#include <ops/classifier_backward/kernels.hpp>

#include <string>
#include <vector>

namespace {

using namespace llmk_test::classifier;
using Space = llmk_test::TestSpace;

// (The pack's elements are ClassifierRows' N, given with the tuning.)
template <int TeamSize, int VectorLength, int Unroll>
struct TestTuning {
  static constexpr int team_size = TeamSize, vector_length = VectorLength;
  static constexpr int unroll = Unroll;
  using launch_bounds = Kokkos::LaunchBounds<>;
};

constexpr bool kHost = llmk::compat::is_host_space<Space>;
constexpr int kTeam = 2, kLanes = kHost ? 1 : 32;

template <class T, int N, class Tuning>
void expect_rows(const ref::HostProblem& h) {
  const DeviceProblem<Space> d(h, true);
  llmk::kernels::ClassifierArgs<Space, T> a;
  const std::int64_t M = h.shape.M(), Vp = h.shape.Vp;
  a.logits = llmk::ConstMatrix<Space, T>(static_cast<const T*>(d.logits.data()), M, Vp);
  a.dlogits = llmk::Matrix<Space, T>(static_cast<T*>(d.logits.data()), M, Vp);
  a.losses = llmk::Vector<Space, float>(static_cast<float*>(d.losses.data()), M);
  a.targets = d.targets;
  a.dloss_value = h.dloss_value;
  a.V = int(h.shape.V);
  llmk::kernels::ClassifierRows<Space, T, N, Tuning>(a).run(Space());
  Space().fence();
  const ref::Result64 r = ref::reference_backward(h);
  EXPECT_EQ(ref::compare("dlogits", d.logits.download(), r.dlogits, Vp,
                         ref::dlogits_tolerance(h.precision), row_scales(h)),
            "");
  EXPECT_EQ(ref::compare("losses", d.losses.download(), r.losses, 1,
                         ref::losses_tolerance(h.precision)),
            "");
}

// Logits whose row maximum lies in the first packs (one thread's) of row 0
// and in the last (the other's) of row 1.
ref::HostProblem problem(const ref::Shape& s, Precision p) {
  ref::HostProblem h = ref::make_problem(s, 21, p);
  for (std::int64_t c = 0; c < 8; ++c) {
    h.logits[std::size_t(c)] = 12.0f;
    h.logits[std::size_t(s.Vp + s.V - 1 - c)] = 12.0f;
  }
  return h;
}

template <int Unroll, int Lanes = kLanes>
void run_all(const ref::Shape& s) {
  SCOPED_TRACE(s.name + " unroll " + std::to_string(Unroll) + " lanes " + std::to_string(Lanes));
  expect_rows<float, 4, TestTuning<kTeam, Lanes, Unroll>>(problem(s, Precision::fp32));
  expect_rows<float, 2, TestTuning<kTeam, Lanes, Unroll>>(problem(s, Precision::fp32));
  expect_rows<float, 1, TestTuning<kTeam, Lanes, Unroll>>(problem(s, Precision::fp32));
  expect_rows<llmk::bf16, 8, TestTuning<kTeam, Lanes, Unroll>>(problem(s, Precision::bf16));
  expect_rows<llmk::bf16, 1, TestTuning<kTeam, Lanes, Unroll>>(problem(s, Precision::bf16));
}

TEST(classifier_rows, TeamsMergeTheirMaxima) {
  if (Space().concurrency() < kTeam * kLanes) GTEST_SKIP() << "needs teams of 2 threads";
  // Packs of 8 elements at most; rows of 10 to 41 of them: lanes loop,
  // packs in flight past the row's end, a pack that straddles V.
  for (const ref::Shape& s : {ref::Shape{"small", 2, 2, 77, 80}, ref::Shape{"wide", 2, 1, 321, 328}}) {
    run_all<1>(s);
    run_all<3>(s);
    // On a host, 4 "lanes" a thread as well (run one after the other into
    // one sum there): a lane's packs at its own stride, as on a GPU.
    if constexpr (kHost) run_all<2, 4>(s);
  }
}

}  // namespace
