// llmk::classifier_forward's own cases on the execution space
// LLMK_TEST_SPACE, beside its contract tests (tests/contract/, registered by
// the generated space_classifier_forward.cpp with
// support/classifier_forward_adapter.hpp):
//  - ClassifierForward.MatchesBackwardLosses: the same logits and targets
//    through classifier_backward and classifier_forward, every
//    implementation and precision: the forward's losses bitwise the
//    backward's fused kernel's (one kernel, the dlogits pass skipped), and
//    the logits unchanged.
//  - ClassifierForward.BadTargetsRefused: a target of V at position 4,
//    refused naming 'targets', the position and the value, losses bitwise
//    unchanged.
#include "contract/all.hpp"
#include "support/classifier_forward_adapter.hpp"
#include "support/test_space.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using Space = llmk_test::TestSpace;
using llmk::reference::Precision;
namespace cl = llmk::reference::classifier;
using llmk_test::classifier::DeviceArray;

template <class V>
V device_ints(const std::vector<std::int32_t>& host) {
  V d("targets", host.size());
  auto h = Kokkos::create_mirror_view(d);
  for (std::size_t i = 0; i < host.size(); ++i) h(i) = host[i];
  Kokkos::deep_copy(d, h);
  return d;
}
using Ints = Kokkos::View<std::int32_t*, Kokkos::LayoutRight, Space::memory_space>;

TEST(ClassifierForward, MatchesBackwardLosses) {
  for (const Precision p : {Precision::fp32, Precision::bf16}) {
    for (const cl::Shape& s : {cl::Shape{"gpt2pad", 2, 3, 257, 264}, cl::Shape{"odd", 3, 5, 61, 61}}) {
      const cl::HostProblem h = cl::make_problem(s, 11, p);
      const llmk::DType t = p == Precision::bf16 ? llmk::DType::bf16 : llmk::DType::f32;
      DeviceArray<Space> logits(s.M() * s.Vp, t), dlogits(s.M() * s.Vp, t);
      DeviceArray<Space> forward(s.M(), llmk::DType::f32), backward(s.M(), llmk::DType::f32);
      logits.upload(h.logits);
      const Ints targets = device_ints<Ints>(h.targets);
      llmk::ClassifierBackwardOptions bo;
      bo.impl = "fused";
      llmk::classifier_backward(Space(), llmk::BufferRef(dlogits.data(), t),
                                static_cast<float*>(backward.data()),
                                llmk::ConstBufferRef(logits.data(), t), targets.data(), 1.0f, s.B,
                                s.T, s.V, s.Vp, bo);
      for (const char* impl : {"fused", "naive"}) {
        SCOPED_TRACE(std::string(impl) + " " + llmk::reference::precision_name(p) + " " + s.name);
        llmk::ClassifierForwardOptions fo;
        fo.impl = impl;
        llmk::classifier_forward(Space(), static_cast<float*>(forward.data()),
                                 llmk::ConstBufferRef(logits.data(), t), targets.data(), s.B, s.T,
                                 s.V, s.Vp, fo);
        Space().fence();
        const std::vector<float> f = forward.download(), b = backward.download();
        if (std::string(impl) == "fused") {
          EXPECT_EQ(f, b) << "the forward's losses differ from the backward's fused kernel's";
        } else {
          EXPECT_EQ(cl::compare("losses", f, cl::reference_backward(h).losses, 1,
                                cl::losses_tolerance(p)),
                    "");
        }
        const std::vector<float> after = logits.download();
        for (std::size_t i = 0; i < after.size(); ++i)
          if (!(after[i] == h.logits[i] || (after[i] != after[i] && h.logits[i] != h.logits[i])))
            FAIL() << "logits[" << i << "] changed";
      }
    }
  }
}

TEST(ClassifierForward, BadTargetsRefused) {
  const cl::Shape s{"bad", 2, 4, 13, 16};
  cl::HostProblem h = cl::make_problem(s, 3, Precision::fp32);
  h.targets[4] = std::int32_t(s.V);
  DeviceArray<Space> logits(s.M() * s.Vp, llmk::DType::f32), losses(s.M(), llmk::DType::f32);
  logits.upload(h.logits);
  const std::vector<float> before(std::size_t(s.M()), 7.0f);
  losses.upload(before);
  const Ints targets = device_ints<Ints>(h.targets);
  try {
    llmk::classifier_forward(Space(), static_cast<float*>(losses.data()),
                             llmk::ConstBufferRef(static_cast<const float*>(logits.data())),
                             targets.data(), s.B, s.T, s.V, s.Vp);
    FAIL() << "a target of V was not refused";
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("'targets'"), std::string::npos) << m;
    EXPECT_NE(m.find("position 4 (13)"), std::string::npos) << m;
  }
  EXPECT_EQ(losses.download(), before) << "losses were written before the refusal";
}

}  // namespace
