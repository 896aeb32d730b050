// llmk::adamw's own cases on the execution space LLMK_TEST_SPACE, beside
// its contract tests (tests/contract/, registered by the generated
// space_adamw.cpp with support/adamw_adapter.hpp):
//  - AdamWSteps.*: five steps in a row on one state (t = 1 … 5, the learning
//    rate and clipping factor changing as a schedule changes them), each
//    against the reference of a step from the state the previous call left:
//    the state carried from call to call and t's bias corrections, which
//    one call alone does not show.
//  - AdamWSteps.ClippedOnDevice: the clipping factor from a squared norm in
//    device memory (hp.grad_norm_squared), above the bound and below it,
//    against the reference with the host's factor.
//  - AdamWHyperparams.Refused: each hyperparameter out of its range refused,
//    naming it, with nothing written (the device norm's bound and place too).
#include "contract/all.hpp"
#include "support/adamw_adapter.hpp"
#include "support/compare.hpp"
#include "support/offset_array.hpp"
#include "support/test_space.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using Space = llmk_test::TestSpace;
using llmk::reference::Precision;
namespace ref = llmk::reference::adamw;

// A configuration's element types: params T, grads G.
template <class T, class G>
constexpr Precision precision_of = std::is_same_v<T, float>   ? Precision::fp32
                                   : std::is_same_v<G, float> ? Precision::bf16_fp32grad
                                                              : Precision::bf16;

// A problem's arrays on the device (master absent where the shape has none).
template <class T, class G = T>
struct DeviceState {
  llmk_test::OffsetArray<T, Space> params;
  llmk_test::OffsetArray<G, Space> grads;
  llmk_test::OffsetArray<float, Space> m, v, master;
  explicit DeviceState(const ref::HostProblem& p)
      : params(p.params, 0, 0.0f),
        grads(p.grads, 0, 0.0f),
        m(p.m, 0, 0.0f),
        v(p.v, 0, 0.0f),
        master(p.master, 0, 0.0f) {}
  void step(const llmk::AdamWHyperparams& hp, std::int64_t N, bool with_master) {
    llmk::adamw(Space(), llmk::BufferRef(params.data()), llmk::ConstBufferRef(grads.data()),
                m.data(), v.data(), with_master ? master.data() : nullptr, N, hp);
    Space().fence();
  }
};

template <class T, class G = T>
void check_steps(bool with_master) {
  constexpr Precision precision = precision_of<T, G>;
  const ref::Shape shape{"steps", 3, 1111, with_master};
  ref::HostProblem p = ref::make_problem(shape, 51, precision);
  DeviceState<T, G> d(p);
  for (std::int64_t t = 1; t <= 5; ++t) {
    SCOPED_TRACE("step " + std::to_string(t) + (with_master ? ", master weights" : ""));
    p.hp.t = t;
    p.hp.lr = 0.05f * float(t) / 5.0f;  // a warmup
    p.hp.grad_scale = t == 3 ? 0.25f : 1.0f;
    const std::vector<std::vector<double>> expected = ref::reference_step(p);
    d.step(p.hp, shape.N(), with_master);
    // The state the call left is the next step's.
    p.params = d.params.range(), p.m = d.m.range(), p.v = d.v.range();
    if (with_master) p.master = d.master.range();
    EXPECT_TRUE(llmk_test::matches_reference("params", p.params, expected[0], 0,
                                             ref::tolerance(precision, true)));
    EXPECT_TRUE(llmk_test::matches_reference("m", p.m, expected[1], 0,
                                             ref::tolerance(precision, false)));
    EXPECT_TRUE(llmk_test::matches_reference("v", p.v, expected[2], 0,
                                             ref::tolerance(precision, false)));
    if (with_master)
      EXPECT_TRUE(llmk_test::matches_reference("master", p.master, expected[3], 0,
                                               ref::tolerance(precision, false)));
  }
}

TEST(AdamWSteps, Fp32) {
  check_steps<float>(false);
  check_steps<float>(true);
}
TEST(AdamWSteps, Bf16) {
  check_steps<llmk::bf16>(false);
  check_steps<llmk::bf16>(true);
}
TEST(AdamWSteps, Bf16Fp32Grad) {
  check_steps<llmk::bf16, float>(false);
  check_steps<llmk::bf16, float>(true);
}

// Steps clipped by a norm the kernel reads: ‖g‖ = 4 against a bound of 1
// (the factor 1/4), then ‖g‖ = 0.5 (no clipping), grad_scale 0.5 on top.
TEST(AdamWSteps, ClippedOnDevice) {
  const ref::Shape shape{"clip", 7, 333, true};
  for (const Precision precision : {Precision::fp32, Precision::bf16_fp32grad}) {
    ref::HostProblem p = ref::make_problem(shape, 77, precision);
    for (const float norm : {4.0f, 0.5f}) {
      SCOPED_TRACE(std::string(llmk::reference::precision_name(precision)) + ", norm " +
                   std::to_string(norm));
      llmk_test::OffsetArray<float, Space> norm_squared({norm * norm}, 0, 0.0f);
      llmk::AdamWHyperparams hp = p.hp;
      hp.grad_scale = 0.5f;
      hp.grad_norm_squared = norm_squared.data();
      hp.max_grad_norm = 1.0f;
      ref::HostProblem host = p;  // the reference with the host's factor
      host.hp.grad_scale = 0.5f * std::min(1.0f, 1.0f / norm);
      const std::vector<std::vector<double>> expected = ref::reference_step(host);
      std::vector<float> params, m, v, master;
      if (precision == Precision::fp32) {
        DeviceState<float> d(p);
        d.step(hp, shape.N(), true);
        params = d.params.range(), m = d.m.range(), v = d.v.range(), master = d.master.range();
      } else {
        DeviceState<llmk::bf16, float> d(p);
        d.step(hp, shape.N(), true);
        params = d.params.range(), m = d.m.range(), v = d.v.range(), master = d.master.range();
      }
      EXPECT_TRUE(llmk_test::matches_reference("params", params, expected[0], 0,
                                               ref::tolerance(precision, true)));
      EXPECT_TRUE(llmk_test::matches_reference("m", m, expected[1], 0,
                                               ref::tolerance(precision, false)));
      EXPECT_TRUE(llmk_test::matches_reference("v", v, expected[2], 0,
                                               ref::tolerance(precision, false)));
      EXPECT_TRUE(llmk_test::matches_reference("master", master, expected[3], 0,
                                               ref::tolerance(precision, false)));
    }
  }
}

TEST(AdamWHyperparams, Refused) {
  const ref::Shape shape{"hp", 2, 9, true};
  const ref::HostProblem p = ref::make_problem(shape, 5, Precision::fp32);
  DeviceState<float> d(p);
  constexpr float inf = std::numeric_limits<float>::infinity();
  constexpr float nan = std::numeric_limits<float>::quiet_NaN();
  struct Case {
    const char* name;
    void (*set)(llmk::AdamWHyperparams&);
  };
  const Case cases[] = {
      {"lr", [](llmk::AdamWHyperparams& h) { h.lr = -1e-3f; }},
      {"lr", [](llmk::AdamWHyperparams& h) { h.lr = nan; }},
      {"weight_decay", [](llmk::AdamWHyperparams& h) { h.weight_decay = inf; }},
      {"grad_scale", [](llmk::AdamWHyperparams& h) { h.grad_scale = -0.5f; }},
      {"beta1", [](llmk::AdamWHyperparams& h) { h.beta1 = 1.0f; }},
      {"beta2", [](llmk::AdamWHyperparams& h) { h.beta2 = -0.1f; }},
      {"beta2", [](llmk::AdamWHyperparams& h) { h.beta2 = nan; }},
      {"eps", [](llmk::AdamWHyperparams& h) { h.eps = 0.0f; }},
      {"t", [](llmk::AdamWHyperparams& h) { h.t = 0; }},
      {"max_grad_norm", [](llmk::AdamWHyperparams& h) { h.max_grad_norm = 0.0f; }},
  };
  llmk_test::OffsetArray<float, Space> norm_squared({4.0f}, 0, 0.0f);
  for (const Case& c : cases) {
    llmk::AdamWHyperparams hp = p.hp;
    hp.grad_norm_squared = norm_squared.data();  // checked only where given
    c.set(hp);
    SCOPED_TRACE(c.name);
    try {
      d.step(hp, shape.N(), true);
      ADD_FAILURE() << "no exception thrown";
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr(std::string("'") + c.name + "'"));
    }
    EXPECT_EQ(d.params.range(), p.params) << "params written";
    EXPECT_EQ(d.m.range(), p.m) << "m written";
    EXPECT_EQ(d.v.range(), p.v) << "v written";
    EXPECT_EQ(d.master.range(), p.master) << "master written";
  }
  // The device norm inside an array the kernel writes: refused, not raced.
  llmk::AdamWHyperparams hp = p.hp;
  hp.grad_norm_squared = d.m.data() + 3;
  try {
    d.step(hp, shape.N(), true);
    ADD_FAILURE() << "a norm inside m: no exception thrown";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("'grad_norm_squared' points into argument 'm'"));
  }
  EXPECT_EQ(d.m.range(), p.m) << "m written";
  // A host float handed to a device space: named, not dereferenced.
  if constexpr (!Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                            Space::memory_space>::accessible) {
    const float on_host = 4.0f;
    hp.grad_norm_squared = &on_host;
    try {
      d.step(hp, shape.N(), true);
      ADD_FAILURE() << "a host norm: no exception thrown";
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr("'grad_norm_squared'"));
    }
  }
}

}  // namespace
