// llmk::classifier_backward in the per-space binary (LLMK_TEST_SPACE): beside
// the contract tests (tests/contract/, registered by the generated
// space_classifier_backward.cpp with support/classifier_backward_adapter.hpp:
// targets an int32 input; dlogits a separate array; variants with a
// per-position dloss and without losses), named
// classifier_backward/<aspect>.<case>, its own, named
// classifier_backward.<case>, each result against the float64 reference (its
// reference library's tolerances, element by element, the padded columns
// exactly +0): in place (dlogits the logits' own array) for every
// implementation × precision × shape × entry point, with a scalar and a
// per-position dloss, and without losses; the rows that break a careless
// softmax (huge logits, all equal, the target in the last real column, no
// padding); bad targets refused before any write; the implementation list;
// rows past 2³¹ elements (`HugeRows`, label `huge`).
// (Bad arguments on the host: test_classifier_bad_inputs.cpp.)
#include "contract/all.hpp"
#include "support/classifier_backward_adapter.hpp"
#include "support/classifier_device.hpp"
#include "support/huge_array.hpp"
#include "support/test_space.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace llmk_test::classifier {

// The huge test's values (free functions: nvcc's extended lambdas may not
// live in a test's body): logits(m, c) = ((m·7 + c·13) mod 64)/8 − 4, the
// rows different and cheap to make; targets (m·31) mod V.
inline float huge_logit(const std::int64_t m, const std::int64_t c) {
  return float((m * 7 + c * 13) % 64) / 8.0f - 4.0f;
}
template <class Logits, class Targets>
void fill_huge(const Logits& logits, const Targets& targets, const std::int64_t V) {
  using Space = typename Logits::execution_space;
  const std::int64_t M = std::int64_t(logits.extent(0)), Vp = std::int64_t(logits.extent(1));
  Kokkos::parallel_for(
      "llmk_test::fill_huge_logits",
      Kokkos::MDRangePolicy<Space, Kokkos::Rank<2>, Kokkos::IndexType<std::int64_t>>({0, 0},
                                                                                    {M, Vp}),
      KOKKOS_LAMBDA(const std::int64_t m, const std::int64_t c) {
        logits(m, c) = llmk::bf16(float((m * 7 + c * 13) % 64) / 8.0f - 4.0f);
      });
  Kokkos::parallel_for(
      "llmk_test::fill_huge_targets",
      Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(0, M),
      KOKKOS_LAMBDA(const std::int64_t m) { targets(m) = std::int32_t((m * 31) % V); });
  Kokkos::fence();
}

}  // namespace llmk_test::classifier

namespace {

using namespace llmk_test::classifier;
using Space = llmk_test::TestSpace;

const std::vector<Precision> kPrecisions = {Precision::fp32, Precision::bf16};

// The implementations to test in precision p on Space: row_in_shared runs
// bf16 on Cuda alone.
std::vector<std::string> impls(Precision p) {
  std::vector<std::string> v = {"auto", "fused", "naive"};
  if (p == Precision::bf16 && llmk::available<llmk::ClassifierBackward, Space>("row_in_shared"))
    v.push_back("row_in_shared");
  return v;
}

llmk::ClassifierBackwardOptions with_impl(const std::string& impl) {
  llmk::ClassifierBackwardOptions o;
  o.impl = impl;
  return o;
}

// Runs p through `entry` and checks dlogits, losses and the padded columns
// against the reference.
void expect_matches(const ref::HostProblem& p, const std::string& impl, Entry entry,
                    bool in_place) {
  const DeviceProblem<Space> d(p, in_place);
  d.call(entry, with_impl(impl));
  const ref::Result64 r = ref::reference_backward(p);
  const std::vector<float> dlogits = d.out().download(), losses = d.losses.download();
  const std::int64_t Vp = p.shape.Vp, V = p.shape.V;
  EXPECT_EQ(ref::compare("dlogits", dlogits, r.dlogits, Vp, ref::dlogits_tolerance(p.precision),
                         row_scales(p)),
            "");
  EXPECT_EQ(ref::compare("losses", losses, r.losses, 1, ref::losses_tolerance(p.precision)), "");
  // The padding: +0 exactly, whatever the logits held there (NaN).
  std::int64_t not_zero = 0;
  for (std::int64_t m = 0; m < p.shape.M(); ++m)
    for (std::int64_t c = V; c < Vp; ++c) {
      const float v = dlogits[std::size_t(m * Vp + c)];
      if (!(v == 0.0f && !std::signbit(v))) ++not_zero;
    }
  EXPECT_EQ(not_zero, 0) << "padded columns not +0";
}

std::string trace(const ref::Shape& s, const std::string& impl, Precision p, Entry e,
                  bool in_place, bool per_position) {
  return s.name + " " + impl + " " + llmk::reference::precision_name(p) + " " + entry_name(e) +
         (in_place ? " in place" : " separate") + (per_position ? " dloss per position" : "");
}

// In place (the contract's tests write a separate dlogits): every shape ×
// implementation × precision × entry, with both kinds of dloss.
TEST(classifier_backward, InPlace) {
  for (const ref::Shape& s : ref::test_shapes())
    for (const Precision p : kPrecisions)
      for (const std::string& impl : impls(p))
        for (const Entry e : {Entry::Rank2Views, Entry::Rank3Views, Entry::RawPointers})
          for (const bool per_position : {false, true}) {
            SCOPED_TRACE(trace(s, impl, p, e, true, per_position));
            expect_matches(ref::make_problem(s, 7, p, per_position), impl, e, true);
          }
}

// Rows that a softmax without its max, or with a careless online merge,
// gets wrong: logits around 1000 (exp overflows float past 88.7), all equal
// (p = 1/V, loss = log V), the largest logit in the last real column, −1000
// beside +1000 (exp(x − max) underflows to 0 for most of the row).
TEST(classifier_backward, SpecialRows) {
  const ref::Shape s = {"special", 1, 4, 300, 304};
  for (const Precision p : kPrecisions)
    for (const std::string& impl : impls(p)) {
      SCOPED_TRACE(impl + " " + llmk::reference::precision_name(p));
      ref::HostProblem h = ref::make_problem(s, 5, p);
      for (std::int64_t c = 0; c < s.V; ++c) {
        const float x = h.logits[std::size_t(c)];
        h.logits[std::size_t(c)] = 1000.0f + x;                  // row 0: huge
        h.logits[std::size_t(s.Vp + c)] = 3.0f;                  // row 1: all equal
        h.logits[std::size_t(2 * s.Vp + c)] = c == s.V - 1 ? 9.0f : x;  // row 2: max last
        h.logits[std::size_t(3 * s.Vp + c)] = c % 2 ? 1000.0f : -1000.0f;
      }
      for (float& x : h.logits)
        if (p == Precision::bf16 && !std::isnan(x)) x = llmk::reference::round_to_bf16(x);
      h.targets = {7, 0, std::int32_t(s.V - 1), std::int32_t(s.V - 1)};
      for (const bool in_place : {true, false}) expect_matches(h, impl, Entry::RawPointers, in_place);
      const DeviceProblem<Space> d(h, true);
      d.call(Entry::RawPointers, with_impl(impl));
      const std::vector<float> losses = d.losses.download();
      EXPECT_NEAR(losses[1], std::log(double(s.V)), 1e-5) << "all-equal row's loss is not log V";
    }
}

// V == Vp (no padding) and the target in the last column of every row.
TEST(classifier_backward, TargetInLastColumn) {
  for (const ref::Shape& s : {ref::Shape{"last", 3, 3, 64, 64}, ref::Shape{"lastpad", 3, 3, 61, 64}})
    for (const Precision p : kPrecisions)
      for (const std::string& impl : impls(p)) {
        SCOPED_TRACE(s.name + " " + impl + " " + llmk::reference::precision_name(p));
        ref::HostProblem h = ref::make_problem(s, 3, p);
        for (auto& t : h.targets) t = std::int32_t(s.V - 1);
        expect_matches(h, impl, Entry::Rank2Views, true);
      }
}

// Without losses, in place (the contract's "nolosses" variant writes a
// separate dlogits): dlogits alone, the same values.
TEST(classifier_backward, WithoutLosses) {
  const ref::Shape s = {"nolosses", 2, 3, 70, 72};
  for (const Precision p : kPrecisions)
    for (const std::string& impl : impls(p))
      for (const Entry e : {Entry::Rank2Views, Entry::RawPointers}) {
        const ref::HostProblem h = ref::make_problem(s, 9, p);
        const DeviceProblem<Space> d(h, true, false);
        d.call(e, with_impl(impl));
        EXPECT_EQ(ref::compare("dlogits", d.out().download(), ref::reference_backward(h).dlogits,
                               s.Vp, ref::dlogits_tolerance(h.precision), row_scales(h)),
                  "")
            << impl << " " << llmk::reference::precision_name(p) << " " << entry_name(e);
      }
}

// A target outside [0, V) is refused, naming 'targets' and its position, and
// nothing is written (logits in place, a separate dlogits, losses); with
// check_targets = false the call runs and that row's loss is NaN.
TEST(classifier_backward, BadTargetsRefusedBeforeAnyWrite) {
  const ref::Shape s = {"bad", 2, 4, 50, 56};
  for (const Precision p : kPrecisions)
    for (const std::string& impl : impls(p))
      for (const std::int32_t bad : {-1, 50, 56, 1 << 30})
        for (const bool in_place : {true, false}) {
          SCOPED_TRACE(impl + " " + llmk::reference::precision_name(p) + " target " +
                       std::to_string(bad) + (in_place ? " in place" : ""));
          const ref::HostProblem h = ref::make_problem(s, 13, p);
          const DeviceProblem<Space> d(h, in_place);
          std::vector<std::int32_t> t = h.targets;
          t[5] = bad;
          d.set_targets(t);
          const auto out_before = d.out().raw(), losses_before = d.losses.raw();
          try {
            d.call(Entry::RawPointers, with_impl(impl));
            ADD_FAILURE() << "a bad target was accepted";
          } catch (const std::invalid_argument& e) {
            const std::string what = e.what();
            EXPECT_NE(what.find("'targets'"), std::string::npos) << what;
            EXPECT_NE(what.find("position 5 (" + std::to_string(bad) + ")"), std::string::npos)
                << what;
          }
          EXPECT_EQ(d.out().raw(), out_before) << "dlogits written before the refusal";
          EXPECT_EQ(d.losses.raw(), losses_before) << "losses written before the refusal";
          llmk::ClassifierBackwardOptions o = with_impl(impl);
          o.check_targets = false;
          d.call(Entry::RawPointers, o);
          const std::vector<float> losses = d.losses.download();
          EXPECT_TRUE(std::isnan(losses[5])) << losses[5];
          EXPECT_FALSE(std::isnan(losses[4])) << losses[4];
        }
}

TEST(classifier_backward, Queries) {
  std::vector<std::string> names;
  for (const auto& info : llmk::impls<llmk::ClassifierBackward>()) {
    names.push_back(info.name);
    EXPECT_TRUE(info.deterministic);
    const std::vector<std::string> precisions =
        info.name == "row_in_shared" ? std::vector<std::string>{"bf16"}
                                     : std::vector<std::string>{"fp32", "bf16"};
    EXPECT_EQ(info.precisions, precisions);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"row_in_shared", "fused", "naive"}));
  EXPECT_EQ(llmk::precisions<llmk::ClassifierBackward>(),
            (std::vector<std::string>{"fp32", "bf16"}));
  const bool on_cuda = llmk::available<llmk::ClassifierBackward, Space>("row_in_shared");
  EXPECT_EQ(on_cuda, !llmk_test::is_host_space<Space>);
  EXPECT_EQ((llmk::auto_impl<llmk::ClassifierBackward, Space>("bf16")),
            on_cuda ? "row_in_shared" : "fused");
  EXPECT_EQ((llmk::auto_impl<llmk::ClassifierBackward, Space>("fp32")), "fused");
  EXPECT_TRUE((llmk::available<llmk::ClassifierBackward, Space>("naive")));
  EXPECT_EQ(llmk::classifier_backward_workspace_bytes<Space>(8192, 50257, 50304), 0u);
  EXPECT_THROW((llmk::available<llmk::ClassifierBackward, Space>("tiled")), std::invalid_argument);
}

// Rows past 2³¹ elements in all: M = 42800 rows of GPT-2's Vp = 50304 bf16
// (2³¹ + 5.6·10⁶ elements, 4.3 GB, in place), row 42691 the first to start
// past 2³¹ (where an int element offset m·Vp wraps). Rows near the start,
// across the boundary and at the end are compared with the reference.
TEST(classifier_backward, HugeRows) {
  constexpr bool runs_here =
      std::is_same_v<Space, Kokkos::DefaultHostExecutionSpace> || !llmk_test::is_host_space<Space>;
  if (!runs_here) GTEST_SKIP() << "the default host space and Cuda only";
  const std::int64_t M = 42800, V = 50257, Vp = 50304;
  static_assert((std::int64_t(42691) * 50304) >> 31 == 1 && (std::int64_t(42690) * 50304) >> 31 == 0);
  std::string why;
  if (!llmk_test::enough_memory<Space>(double(M * Vp) * 2 + 3e9, double(M * Vp) * 2 + 2e9, why))
    GTEST_SKIP() << why;
  using Logits = Kokkos::View<llmk::bf16**, Kokkos::LayoutRight, typename Space::memory_space>;
  Logits logits(Kokkos::view_alloc(Kokkos::WithoutInitializing, "huge_logits"), M, Vp);
  TargetsView<Space> targets("huge_targets", M);
  Kokkos::View<float*, Kokkos::LayoutRight, typename Space::memory_space> losses("huge_losses", M);
  const std::vector<std::int64_t> rows = {0, 1, 42689, 42690, 42691, 42692, M - 1};
  for (const std::string impl : {"row_in_shared", "fused", "naive"}) {
    if (!llmk::available<llmk::ClassifierBackward, Space>(impl)) continue;  // row_in_shared: Cuda
    SCOPED_TRACE(impl);
    fill_huge(logits, targets, V);  // afresh: the call overwrites them
    llmk::classifier_backward(Space(), logits, losses, logits, targets, 1.0f, V, with_impl(impl));
    Kokkos::fence();
    for (const std::int64_t m : rows) {
      ref::HostProblem h;
      h.shape = {"row", 1, 1, V, Vp};
      h.precision = Precision::bf16;
      h.logits.resize(std::size_t(Vp));
      for (std::int64_t c = 0; c < Vp; ++c)
        h.logits[std::size_t(c)] = huge_logit(m, c);
      h.targets = {std::int32_t((m * 31) % V)};
      h.dloss_value = 1.0f;
      const ref::Result64 r = ref::reference_backward(h);
      auto row = Kokkos::subview(logits, m, Kokkos::ALL);
      auto host_row = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), row);
      std::vector<float> got(static_cast<std::size_t>(Vp));
      for (std::int64_t c = 0; c < Vp; ++c) got[std::size_t(c)] = float(host_row(c));
      EXPECT_EQ(ref::compare("dlogits", got, r.dlogits, Vp, ref::dlogits_tolerance(h.precision),
                             {1.0}),
                "")
          << "row " << m;
      float loss;
      Kokkos::deep_copy(Kokkos::View<float, Kokkos::HostSpace>(&loss), Kokkos::subview(losses, m));
      EXPECT_NEAR(loss, r.losses[0], 1e-4) << "row " << m;
    }
  }
}

}  // namespace
