// llmk::attention_forward's own cases on the execution space
// LLMK_TEST_SPACE, beside its contract tests (tests/contract/, registered by
// the generated space_attention_forward.cpp with
// support/attention_forward_adapter.hpp: the recompute backward's shapes),
// named "attention_forward/<aspect>.<case>" as they are:
//   FeedsRecompute  its out and lse (bf16 and fp32) into
//                   attention_backward_recompute: dqkv within
//                   recompute_vs_materialized_tolerance of the float64
//                   reference's backward from the float64 forward (what a
//                   training step chains)
#include "contract/all.hpp"
#include "support/attention_forward_adapter.hpp"
#include "support/test_space.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace {

using Space = llmk_test::TestSpace;
using Forward = llmk_test::AttentionForwardContract;
using namespace llmk_test;
using namespace llmk_test::contract;
namespace at = llmk::reference::attention;

// The outputs of one overwriting call of operation O (inputs checked untouched).
template <class O>
Outputs outputs_of(const at::HostProblem& p) {
  const DeviceProblem<O, Space> d(p);
  d.call(Entry::Rank3Views, O::options("auto", p.precision, Overwrites(2, true)));
  Outputs r;
  EXPECT_TRUE(d.download(p, r));
  return r;
}

void check_feeds_recompute(const at::Shape& shape, Precision precision) {
  const at::HostProblem exact = at::make_problem(shape, 7, precision);
  at::HostProblem p = exact;  // its out and lse replaced by llmk's forward of its qkv
  const Outputs forward = outputs_of<Forward>(p);
  ASSERT_EQ(forward.size(), 2u);
  p.out = forward[0];
  p.lse = forward[1];
  const Outputs dqkv = outputs_of<AttentionBackwardRecomputeContract>(p);
  ASSERT_EQ(dqkv.size(), 1u);
  const std::vector<double> ref = at::reference_backward_recompute(exact, true);
  EXPECT_TRUE(matches_reference("dqkv", dqkv[0], ref, 3 * shape.C,
                                at::recompute_vs_materialized_tolerance(precision)));
}

[[maybe_unused]] const bool registered = [] {
  for (const Precision precision : {Precision::fp32, Precision::bf16})
    for (const char* name : {"odd", "T130", "gpt2_heads"}) {
      const auto& shapes = at::test_shapes();
      const at::Shape shape =
          *std::find_if(shapes.begin(), shapes.end(), [&](const at::Shape& s) { return s.name == name; });
      add_test(Forward::name(), "FeedsRecompute",
               std::string(shape.name) + "_" + llmk::reference::precision_name(precision),
               "llmk's out and lse into the recompute backward",
               [=] { check_feeds_recompute(shape, precision); });
    }
  return true;
}();

}  // namespace
