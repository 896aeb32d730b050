// llmk::classifier_backward's argument checks (the validation binary, on the
// default host space): beside the contract's bad inputs
// (tests/contract/bad_inputs.hpp, registered by the generated
// bad_inputs_classifier_backward.cpp with
// support/classifier_backward_adapter.hpp: extents, ranks of the leader
// logits, null pointers, negative and overflowing sizes, overlaps, workspace
// overlaps, element types, implementation names; dlogits a separate array),
// what they do not try, each refused with std::invalid_argument naming it before
// anything is written (the logits are checked unchanged after every
// refusal): targets of the other rank than logits, V above Vp, negative or 0
// with rows; Vp past every implementation's column limit without rows
// (ColumnLimits); the workspace over the logits in place (named as
// dlogits, their own array). Bad targets (values)
// are the per-space binary's (test_classifier_backward.cpp: they are
// checked on the device).
#include "contract/bad_inputs.hpp"
#include "support/classifier_backward_adapter.hpp"
#include "support/classifier_forward_adapter.hpp"
#include "support/classifier_device.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace llmk_test::classifier;
using Space = Kokkos::DefaultHostExecutionSpace;
using llmk::ConstTensorRef;
using llmk::DType;
using llmk::TensorRef;

// B 2, T 3, V 5, Vp 8: every size distinct in messages.
struct Fixture {
  static constexpr std::int64_t B = 2, T = 3, M = 6, V = 5, Vp = 8;
  std::vector<float> logits = std::vector<float>(M * Vp, 0.5f), copy = logits;
  std::vector<float> losses = std::vector<float>(M, 0.0f);
  std::vector<std::int32_t> targets = std::vector<std::int32_t>(M, 1);

  TensorRef<Space> out(std::initializer_list<std::int64_t> e) {
    return TensorRef<Space>({logits.data(), DType::f32}, e);
  }
  ConstTensorRef<Space> in(std::initializer_list<std::int64_t> e) {
    return ConstTensorRef<Space>({logits.data(), DType::f32}, e);
  }
  TensorRef<Space> loss_ref(std::initializer_list<std::int64_t> e = {M}) {
    return TensorRef<Space>({losses.data(), DType::f32}, e);
  }
  llmk::TargetsRef<Space> tgt(std::initializer_list<std::int64_t> e = {M}) {
    return llmk::TargetsRef<Space>(targets.data(), e);
  }
};

void expect_refused(Fixture& f, const std::function<void()>& call,
                    std::initializer_list<const char*> words) {
  try {
    call();
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    for (const char* w : words) EXPECT_NE(what.find(w), std::string::npos) << what;
  }
  EXPECT_EQ(f.logits, f.copy) << "the logits were written";
}

TEST(classifier_backward_BadInputs, Shapes) {
  Fixture f;
  const auto M = f.M, Vp = f.Vp, V = f.V, B = f.B, T = f.T;
  auto call = [&](TensorRef<Space> dl, TensorRef<Space> loss, ConstTensorRef<Space> lg,
                  llmk::TargetsRef<Space> t, llmk::DlossRef<Space> d, std::int64_t v) {
    return [=] { llmk::classifier_backward(Space(), dl, loss, lg, t, d, v); };
  };
  expect_refused(f, call(f.out({B, T, Vp}), f.loss_ref({B, T}), f.in({B, T, Vp}), f.tgt({M}), 1.0f, V),
                 {"'targets'", "(B, T)"});
  expect_refused(f, call(f.out({M, Vp}), f.loss_ref(), f.in({M, Vp}), f.tgt(), 1.0f, Vp + 1),
                 {"V = 9", "Vp = 8"});
  expect_refused(f, call(f.out({M, Vp}), f.loss_ref(), f.in({M, Vp}), f.tgt(), 1.0f, -1),
                 {"V = -1"});
  expect_refused(f, call(f.out({M, Vp}), f.loss_ref(), f.in({M, Vp}), f.tgt(), 1.0f, 0),
                 {"V = 0"});
}

// No rows, but rows too wide for every implementation: refused on Vp.
TEST(classifier_backward_BadInputs, ColumnLimits) {
  Fixture f;
  float* const lg = f.logits.data();
  for (const char* impl : {"fused", "naive"}) {
    llmk::ClassifierBackwardOptions o;
    o.impl = impl;
    expect_refused(f, [&] {
      llmk::classifier_backward(Space(), lg, nullptr, lg, nullptr, 1.0f, 0, 1, 1,
                                std::int64_t(1) << 31, o);
    }, {"Vp = 2147483648 exceeds", impl});
  }
}

// The context's workspace (Context::use_workspace) in the memory of an
// argument: refused naming it, though the call needs no workspace (the
// logits are dlogits' own array here: named as dlogits).
TEST(classifier_backward_BadInputs, WorkspaceOverlap) {
  Fixture f;
  const std::vector<float> losses = f.losses;
  const std::pair<const char*, void*> args[] = {{"dlogits", f.logits.data() + 5},
                                                {"losses", f.losses.data()},
                                                {"targets", f.targets.data() + 1}};
  for (const auto& [name, data] : args) {
    SCOPED_TRACE(name);
    llmk::Context<Space> ctx{Space()};
    ctx.use_workspace(data, 16);
    const auto dlogits = f.out({Fixture::M, Fixture::Vp});
    const auto logits = f.in({Fixture::M, Fixture::Vp});
    const auto loss = f.loss_ref();
    const auto targets = f.tgt();
    const std::string overlap = std::string("overlaps argument '") + name + "'";
    expect_refused(f, [&] {
      llmk::classifier_backward(ctx, dlogits, loss, logits, targets, 1.0f, Fixture::V);
    }, {"workspace", overlap.c_str()});
    EXPECT_EQ(f.losses, losses) << "the losses were written";
  }
}

}  // namespace
