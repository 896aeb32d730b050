// llmk::residual_forward's own cases on the execution space
// LLMK_TEST_SPACE, beside its contract tests (tests/contract/, registered by
// the generated space_residual_forward.cpp with
// support/residual_forward_adapter.hpp):
//  - ResidualForwardInPlace.*: out = inp1, the same array (the residual
//    stream updated in place), overwritten and accumulated, both
//    implementations, with the arrays aligned alike at offsets 0 and 3 (the
//    packs after a head of single elements) and inp2 apart (element by
//    element): the reference of a problem whose out starts as inp1's
//    values, for N across the host blocks and the packs, the elements
//    around out's range untouched.
#include "contract/all.hpp"
#include "support/compare.hpp"
#include "support/offset_array.hpp"
#include "support/residual_forward_adapter.hpp"
#include "support/test_space.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using Space = llmk_test::TestSpace;
using llmk::reference::Precision;
namespace ref = llmk::reference::residual_forward;

template <class T>
constexpr Precision precision_of = std::is_same_v<T, float> ? Precision::fp32 : Precision::bf16;

template <class T>
void check_in_place(std::int64_t N) {
  ref::HostProblem p = ref::make_problem({"inplace", 1, 1, N}, 41, precision_of<T>);
  p.out = p.inp1;  // what the call reads as out when it accumulates
  constexpr float kFill = 7.0f;
  for (const bool overwrite : {false, true}) {
    const std::vector<double> expected = ref::reference_forward(p, overwrite);
    for (const int offset : {0, 3}) {
      for (const int inp2_offset : {offset, 1}) {
        for (const char* impl : {"packed", "naive"}) {
          SCOPED_TRACE(std::string(impl) + ", N = " + std::to_string(N) +
                       (overwrite ? ", overwrite" : ", accumulate") + ", offsets " +
                       std::to_string(offset) + " and " + std::to_string(inp2_offset));
          llmk_test::OffsetArray<T, Space> x(p.inp1, offset, kFill), y(p.inp2, inp2_offset, 0.0f);
          llmk::ResidualForwardOptions options;
          options.impl = impl;
          options.out_update = overwrite ? llmk::Update::overwrite : llmk::Update::accumulate;
          llmk::residual_forward(Space(), llmk::BufferRef(x.data()), llmk::ConstBufferRef(x.data()),
                                 llmk::ConstBufferRef(y.data()), N, options);
          Space().fence();
          EXPECT_TRUE(llmk_test::matches_reference("out", x.range(), expected, 0,
                                                   ref::tolerance(precision_of<T>)));
          const std::vector<float> all = x.all();
          for (std::size_t i = 0; i < all.size(); ++i) {
            if (i >= std::size_t(offset) && i < std::size_t(offset + N)) continue;
            ASSERT_EQ(all[i], kFill) << "element " << i << " outside out's range was written";
          }
        }
      }
    }
  }
}

TEST(ResidualForwardInPlace, Fp32) {
  for (std::int64_t N : {1, 7, 1031, 20000}) check_in_place<float>(N);
}
TEST(ResidualForwardInPlace, Bf16) {
  for (std::int64_t N : {1, 17, 1031, 20000}) check_in_place<llmk::bf16>(N);
}

}  // namespace
