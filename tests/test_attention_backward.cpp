// llmk::attention_backward's own cases in the per-space binary
// (LLMK_TEST_SPACE), beside the contract tests every operation passes
// (tests/contract/, registered by the generated space_attention_backward.cpp
// with support/attention_backward_adapter.hpp), named
// "attention_backward/<aspect>.<case>" as they are:
//   MaskedNeverRead  att's masked part (t' > t) all NaN: the results are
//                    finite, within the tolerance of the reference, and (for
//                    deterministic implementations) bitwise those of the
//                    same problem with finite garbage there, through every
//                    entry, dqkv accumulated and overwritten
//   OnePosition      T = 1: att = 1, so dq and dk are exactly 0 and dv is
//                    exactly dout (overwritten), in every precision (in
//                    tf32 dv within dout's TF32 rounding)
// (Bad arguments on the host: test_attention_bad_inputs.cpp, in the
// validation binary; the reference itself: test_attention_reference.cpp.)
#include "contract/all.hpp"
#include "support/attention_backward_adapter.hpp"
#include "support/test_space.hpp"

#include <cmath>

namespace {

using Space = llmk_test::TestSpace;
using Op = llmk_test::AttentionBackwardContract;
using namespace llmk_test;
using namespace llmk_test::contract;
namespace at = llmk::reference::attention;

// One call of a problem through an entry, its outputs (inputs checked bitwise
// untouched, guard bands too).
Outputs run(const Op::Problem& p, const std::string& impl, bool overwrite, Entry entry) {
  const DeviceProblem<Op, Space> d(p);
  d.call(entry, Op::options(impl, p.precision, {overwrite}));
  Outputs r;
  EXPECT_TRUE(d.download(p, r));
  return r;
}

void check_masked_never_read(const ImplPrecision& ip) {
  const ImplCatalog cat = Op::catalog<Space>();
  const bool bitwise = promises_bitwise_repeatable(cat, ip.impl, ip.precision);
  for (const at::Shape shape : {at::Shape{"odd", 3, 5, 6, 2}, at::Shape{"T130", 1, 130, 24, 2}}) {
    const Op::Problem clean = Op::make(shape, 31, ip.precision);
    const Op::Problem nan = at::with_masked_nan(clean);
    const std::vector<ArgSpec> specs = Op::args(shape, ip.precision);
    int i = 0;
    for (const bool overwrite : {false, true}) {
      const Entry entry = Entry(i++ % 3);
      SCOPED_TRACE(shape.name + (overwrite ? ", overwrite" : ", accumulate") + ", entry " +
                   entry_test_name(entry));
      const Outputs r = run(nan, ip.impl, overwrite, entry);
      // The reference of the clean problem: it never reads the masked part,
      // so every element is finite and must come back so.
      expect_matches_reference<Op>(specs, r, Op::reference(clean, {overwrite}), ip.precision,
                                   promises_rounding_once(cat, ip.impl, ip.precision));
      if (bitwise)
        EXPECT_TRUE(bitwise_equal(specs, r, run(clean, ip.impl, overwrite, entry)))
            << "the masked part's values changed the results";
    }
  }
}

void check_one_position(const ImplPrecision& ip) {
  const at::Shape shape{"T1", 3, 1, 12, 3};
  const Op::Problem p = poisoned<Op>(Op::make(shape, 17, ip.precision), {true});
  for (const Entry entry : {Entry::Rank2Views, Entry::Rank3Views, Entry::RawPointers}) {
    SCOPED_TRACE(entry_test_name(entry));
    const Outputs r = run(p, ip.impl, true, entry);
    ASSERT_EQ(r.size(), 1u);
    const std::int64_t C = shape.C;
    for (std::int64_t b = 0; b < shape.B; ++b)
      for (std::int64_t c = 0; c < 3 * C; ++c) {
        // att[b, h, 0, 0] = 1 exactly: dv = dout, dq = dk = α·1·(datt − datt)·… = 0.
        const float expected = c < 2 * C ? 0.0f : p.dout[std::size_t(b * C + c - 2 * C)];
        const float got = r[0][std::size_t(b * 3 * C + c)];
        if (ip.precision == Precision::tf32 && c >= 2 * C)
          // The tensor cores see dout with 10 mantissa bits (rounded, or
          // truncated: at most 2⁻¹⁰ relative).
          ASSERT_NEAR(got, expected, std::fabs(expected) * 0x1p-10f)
              << "sequence " << b << ", column " << c;
        else
          ASSERT_EQ(got, expected) << "sequence " << b << ", column " << c;
      }
  }
}

[[maybe_unused]] const bool registered = [] {
  for (const ImplPrecision& ip : impl_precisions_of<Op, Space>()) {
    add_test(Op::name(), "MaskedNeverRead", case_name(ip), case_description(ip),
             [=] { check_masked_never_read(ip); });
    add_test(Op::name(), "OnePosition", case_name(ip), case_description(ip),
             [=] { check_one_position(ip); });
  }
  return true;
}();

}  // namespace
