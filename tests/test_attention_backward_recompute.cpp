// llmk::attention_backward_recompute's own cases in the per-space binary
// (LLMK_TEST_SPACE), beside its contract tests (tests/contract/, registered
// by the generated space_attention_backward_recompute.cpp with
// support/attention_backward_recompute_adapter.hpp), named
// "attention_backward_recompute/<aspect>.<case>" as they are:
//   MatchesMaterialized  on the contract's shapes, the same problem through
//                        attention_backward ("materialized", from att) and
//                        through the recompute variant (from out and lse):
//                        within recompute_vs_materialized_tolerance
//   Causal               q, k, v, dout, out and lse of the positions after t0
//                        replaced by other random values: dq of the
//                        positions ≤ t0 bitwise unchanged; those of the
//                        positions before t1 replaced: dk and dv of the
//                        positions ≥ t1 bitwise unchanged (and the others
//                        changed, so the replacement shows)
// (Bad arguments: test_attention_recompute_bad_inputs.cpp; the reference:
// test_attention_reference.cpp; T = 16384: test_attention_recompute_huge.cpp.)
#include "contract/all.hpp"
#include "support/attention_backward_recompute_adapter.hpp"
#include "support/test_space.hpp"

#include <ops/attention_backward_recompute/flash_mma.hpp>

#include <limits>
#include <stdexcept>

namespace {

using Space = llmk_test::TestSpace;
using Op = llmk_test::AttentionBackwardRecomputeContract;
using Materialized = llmk_test::AttentionBackwardContract;
using namespace llmk_test;
using namespace llmk_test::contract;
namespace at = llmk::reference::attention;

// dqkv of one overwriting call of operation O (inputs checked untouched).
template <class O>
std::vector<float> dqkv_of(const at::HostProblem& p, const std::string& impl) {
  const DeviceProblem<O, Space> d(p);
  d.call(Entry::Rank3Views, O::options(impl, p.precision, {true}));
  Outputs r;
  EXPECT_TRUE(d.download(p, r));
  return r.empty() ? std::vector<float>{} : r[0];
}

void check_matches_materialized(const ImplPrecision& ip) {
  for (const at::Shape& shape : Op::shapes()) {
    SCOPED_TRACE(shape.name);
    const at::HostProblem p = Op::make(shape, 5, ip.precision);
    const std::vector<float> recomputed = dqkv_of<Op>(p, ip.impl);
    const std::vector<float> materialized = dqkv_of<Materialized>(p, "materialized");
    EXPECT_TRUE(matches_reference("dqkv", recomputed, materialized, 3 * shape.C,
                                  at::recompute_vs_materialized_tolerance(ip.precision)));
  }
}

// Rows [first, last) of every array of p (the positions of each sequence)
// from q's other problem `o`.
void replace_positions(at::HostProblem& p, const at::HostProblem& o, std::int64_t first,
                       std::int64_t last) {
  const at::Shape& s = p.shape;
  for (std::int64_t b = 0; b < s.B; ++b)
    for (std::int64_t t = first; t < last; ++t) {
      const std::size_t r = std::size_t(b * s.T + t);
      for (std::int64_t c = 0; c < 3 * s.C; ++c) p.qkv[r * 3 * s.C + c] = o.qkv[r * 3 * s.C + c];
      for (std::int64_t c = 0; c < s.C; ++c) {
        p.dout[r * s.C + c] = o.dout[r * s.C + c];
        p.out[r * s.C + c] = o.out[r * s.C + c];
      }
      for (std::int64_t h = 0; h < s.NH; ++h) {
        const std::size_t l = std::size_t((b * s.NH + h) * s.T + t);
        p.lse[l] = o.lse[l];
      }
    }
}

// Whether parts [part0, part1) of dqkv (0 dq, 1 dk, 2 dv) of positions
// [first, last) are bitwise equal in a and b.
bool same_parts(const at::Shape& s, const std::vector<float>& a, const std::vector<float>& b,
                std::int64_t first, std::int64_t last, int part0, int part1) {
  for (std::int64_t bt = 0; bt < s.B; ++bt)
    for (std::int64_t t = first; t < last; ++t)
      for (std::int64_t c = part0 * s.C; c < part1 * s.C; ++c) {
        const std::size_t i = std::size_t((bt * s.T + t) * 3 * s.C + c);
        if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0) return false;
      }
  return true;
}

void check_causal(const ImplPrecision& ip) {
  // T past a few blocks of every tuning (64 on hosts, 16 and 32 on Cuda);
  // cuts inside blocks and on their boundaries.
  const at::Shape shape{"causal", 2, 150, 24, 2};
  const at::HostProblem p = Op::make(shape, 41, ip.precision);
  const at::HostProblem other = Op::make(shape, 42, ip.precision);
  const std::vector<float> base = dqkv_of<Op>(p, ip.impl);
  for (const std::int64_t cut : {std::int64_t(0), std::int64_t(31), std::int64_t(64),
                                 std::int64_t(100), std::int64_t(148)}) {
    SCOPED_TRACE("cut at " + std::to_string(cut));
    at::HostProblem later = p;  // positions after `cut` replaced
    replace_positions(later, other, cut + 1, shape.T);
    const std::vector<float> r_later = dqkv_of<Op>(later, ip.impl);
    EXPECT_TRUE(same_parts(shape, base, r_later, 0, cut + 1, 0, 1))
        << "dq of positions <= " << cut << " changed with the inputs after it";
    EXPECT_FALSE(same_parts(shape, base, r_later, 0, cut + 1, 1, 3))
        << "dk, dv of positions <= " << cut << " did not change: the replacement shows nothing";
    at::HostProblem earlier = p;  // positions before `cut` replaced
    replace_positions(earlier, other, 0, cut);
    const std::vector<float> r_earlier = dqkv_of<Op>(earlier, ip.impl);
    EXPECT_TRUE(same_parts(shape, base, r_earlier, cut, shape.T, 1, 3))
        << "dk, dv of positions >= " << cut << " changed with the queries before it";
    if (cut > 0)
      EXPECT_FALSE(same_parts(shape, base, r_earlier, cut, shape.T, 0, 1))
          << "dq of positions >= " << cut << " did not change with the keys before it";
  }
}

// flash_mma's grids (y: blocks of 64 positions, at most 65535; x: B·NH) are
// refused, and passed over by "auto", past their limits: sizes alone, so on
// every space.
TEST(attention_backward_recompute_FlashMma, GridLimits) {
  using llmk::op::attention_backward_recompute::FlashMma;
  using llmk::op::attention_backward_recompute::Sizes;
  const llmk::index_t most_T = 65535 * 64, most_heads = std::numeric_limits<int>::max();
  EXPECT_TRUE(FlashMma::grid_fits(Sizes{8, most_T, 768, 12}));
  EXPECT_FALSE(FlashMma::grid_fits(Sizes{8, most_T + 1, 768, 12}));
  EXPECT_TRUE(FlashMma::grid_fits(Sizes{most_heads, 64, 1, 1}));
  EXPECT_FALSE(FlashMma::grid_fits(Sizes{most_heads / 2 + 1, 64, 2, 2}));
}

// flash_mma_ds's workspace of dS tiles: the causal tiles of 64 × 64 of every
// head, counted exactly, and refused (std::invalid_argument, before the call
// writes anything: the workspace is sized first) where the count would pass
// 2⁶⁰ instead of wrapping into a small buffer. Sizes alone: every space.
TEST(attention_backward_recompute_FlashMmaDs, TileCount) {
  using llmk::op::attention_backward_recompute::FlashMmaDs;
  using llmk::op::attention_backward_recompute::Sizes;
  EXPECT_EQ(FlashMmaDs::ds_elements(Sizes{8, 1024, 768, 12}), 8 * 12 * 136 * 4096);  // 16 blocks
  EXPECT_EQ(FlashMmaDs::ds_elements(Sizes{1, 130, 64, 1}), 6 * 4096);  // 3 blocks, the last partial
  EXPECT_EQ(FlashMmaDs::ds_elements(Sizes{2, 1, 2, 2}), 4 * 4096);
  EXPECT_THROW(FlashMmaDs::ds_elements(Sizes{1 << 16, 65535 * 64, 1 << 16, 1 << 16}),
               std::invalid_argument);
}

[[maybe_unused]] const bool registered = [] {
  for (const ImplPrecision& ip : impl_precisions_of<Op, Space>()) {
    add_test(Op::name(), "MatchesMaterialized", case_name(ip), case_description(ip),
             [=] { check_matches_materialized(ip); });
    add_test(Op::name(), "Causal", case_name(ip), case_description(ip),
             [=] { check_causal(ip); });
  }
  return true;
}();

}  // namespace
