// llmk::attention_backward's, attention_backward_recompute's and attention_forward's bad inputs,
// on the default host execution space (argument checks run on the host
// before any kernel, whatever the space), their own beside the contract's
// (tests/contract/bad_inputs.hpp, registered by the generated
// bad_inputs_<op>.cpp with their adapters): (<op>/Heads.*) C not a multiple of NH, NH = 0 (and attention_backward's
// att with its last two extents unequal), each refused naming what is
// wrong, through the views and the raw pointers, every array bitwise as it
// was; and (Heads.MultiplePastTheRange) a multiple "3C" past int64's range.
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <llmk/attention_backward.hpp>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "contract/bad_inputs.hpp"
#include "support/attention_forward_adapter.hpp"

namespace {

using Host = Kokkos::DefaultHostExecutionSpace;
using Op = llmk_test::AttentionBackwardContract;
using Recompute = llmk_test::AttentionBackwardRecomputeContract;
using Forward = llmk_test::AttentionForwardContract;
using namespace llmk_test;
using namespace llmk_test::contract;

// The bad-input problem (B 2, T 3, C 15, NH 5) with dout, qkv and dqkv (and
// out) of C = 16 channels (and C = 16 given to the raw entry): 16 channels
// do not split into the leader's 5 heads.
template <class O>
void check_c_not_multiple_of_nh(Entry entry) {
  for_both_updates<O, Host>(O::bad_input_shape(), Precision::fp32, [&](BadCall<O, Host>& bad) {
    const std::int64_t B = 2, T = 3, C = 16;
    bad.entry = entry;
    bad.dims()[2] = C;
    std::vector<std::pair<std::size_t, std::int64_t>> widths = {{O::qkv, 3 * C}};
    if constexpr (std::is_same_v<O, Forward>) {
      widths.push_back({O::out, C});
    } else {
      widths.insert(widths.end(), {{O::dqkv, 3 * C}, {O::dout, C}});
      if constexpr (std::is_same_v<O, Recompute>) widths.push_back({O::out, C});
    }
    for (const auto& [arg, width] : widths) {
      ArgSpec& s = bad.specs()[arg];
      s.rank2 = {B * T, width};
      s.rank3 = {B, T, width};
      bad.replace(arg, B * T * width, llmk::DType::f32);
    }
    bad.expect_refused({"C = 16", "not a multiple of NH = 5"});
  });
}

// NH = 0: through views an att of extents (2, 0, 3, 3) (an lse of (2, 0,
// 3)), through raw pointers NH = 0.
template <class O>
void check_no_heads(Entry entry) {
  for_both_updates<O, Host>(O::bad_input_shape(), Precision::fp32, [&](BadCall<O, Host>& bad) {
    bad.entry = entry;
    if (entry == Entry::RawPointers) {
      bad.dims()[3] = 0;
    } else if constexpr (!std::is_same_v<O, Op>) {
      ArgSpec& lse = bad.specs()[O::lse];
      lse.rank2 = lse.rank3 = {2, 0, 3};
    } else {
      ArgSpec& att = bad.specs()[O::att];
      att.rank2 = att.rank3 = {2, 0, 3, 3};
    }
    bad.expect_refused({"NH = 0", "at least one head"});
  });
}

// att (B, NH, T, T + 1): not a T × T matrix per head.
void check_att_not_square() {
  for_both_updates<Op, Host>(Op::bad_input_shape(), Precision::fp32, [&](BadCall<Op, Host>& bad) {
    ArgSpec& att = bad.specs()[Op::att];
    att.rank2 = att.rank3 = {2, 5, 3, 4};
    bad.replace(Op::att, 2 * 5 * 3 * 4, llmk::DType::f32);
    bad.expect_refused({"'att'", "(2, 5, 3, 4)", "(2, 5, 3, 3)"});
  });
}

// qkv's width 7 (not a multiple of 3) leaves C to dout, whose C = 2⁶² makes
// qkv's expected 3C past int64's range. Refused naming qkv and the width it
// should have had, its multiple unevaluated (a product that wrapped would
// name a wrong width); through TensorRefs over a small poisoned buffer,
// which stays as it was.
void check_multiple_past_the_range() {
  Kokkos::View<float*, Host> buf("buf", 8);
  Kokkos::deep_copy(buf, 7.0f);
  const std::int64_t C = std::int64_t(1) << 62;
  const llmk::TensorRef<Host> dqkv({buf.data(), llmk::DType::f32}, {1, 1, 7});
  const llmk::ConstTensorRef<Host> qkv({buf.data(), llmk::DType::f32}, {1, 1, 7}),
      dout({buf.data(), llmk::DType::f32}, {1, 1, C}),
      att({buf.data(), llmk::DType::f32}, {1, 1, 1, 1});
  llmk::Context<Host> ctx{Host()};
  try {
    llmk::attention_backward(ctx, dqkv, dout, qkv, att);
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'qkv'"), std::string::npos) << what;
    EXPECT_NE(what.find("3·4611686018427387904"), std::string::npos) << what;
  }
  for (std::size_t i = 0; i < buf.extent(0); ++i) EXPECT_EQ(buf(i), 7.0f) << i;
}

[[maybe_unused]] const bool registered = [] {
  for (const Entry entry : {Entry::Rank2Views, Entry::Rank3Views, Entry::RawPointers}) {
    add_test(Op::name(), "Heads", std::string("CNotMultipleOfNH_") + entry_test_name(entry),
             "C = 16, NH = 5", [=] { check_c_not_multiple_of_nh<Op>(entry); });
    add_test(Op::name(), "Heads", std::string("NoHeads_") + entry_test_name(entry), "NH = 0",
             [=] { check_no_heads<Op>(entry); });
    add_test(Recompute::name(), "Heads", std::string("CNotMultipleOfNH_") + entry_test_name(entry),
             "C = 16, NH = 5", [=] { check_c_not_multiple_of_nh<Recompute>(entry); });
    add_test(Recompute::name(), "Heads", std::string("NoHeads_") + entry_test_name(entry),
             "NH = 0", [=] { check_no_heads<Recompute>(entry); });
    add_test(Forward::name(), "Heads", std::string("CNotMultipleOfNH_") + entry_test_name(entry),
             "C = 16, NH = 5", [=] { check_c_not_multiple_of_nh<Forward>(entry); });
    add_test(Forward::name(), "Heads", std::string("NoHeads_") + entry_test_name(entry),
             "NH = 0", [=] { check_no_heads<Forward>(entry); });
  }
  add_test(Op::name(), "Heads", "AttNotSquare", "att (2, 5, 3, 4)", [] { check_att_not_square(); });
  add_test(Op::name(), "Heads", "MultiplePastTheRange", "qkv 7 wide, dout C = 2^62",
           [] { check_multiple_past_the_range(); });
  return true;
}();

}  // namespace
