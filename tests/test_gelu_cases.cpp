// llmk::gelu_backward's own cases on LLMK_TEST_SPACE (beside the contract
// tests of test_gelu_backward.cpp):
//  - Alignment.*: each array moved off a 16-byte boundary by 0 … pack − 1
//    elements, alike (the packs after a head of single elements) and apart
//    (element by element), for N around the packs' sizes: the packed and the
//    naive implementation equal element by element (within an FMA's rounding),
//    within the reference's tolerance,
//    the elements around dinp's range untouched;
//  - Views.*: (M, C) views with C > 1 (the contract's rank-2 calls are
//    (N, 1)), the same bits as the raw-pointer call;
//  - SpecialValues.*: gelu' at 0, −0, its tails (±3 … ±10¹²), NaN and ±Inf
//    (NaN, as the float64 formula gives: x·(1 − t²) is ∞·0);
//  - InPlace.*: dinp = dout, the same array (llm.c's gelu_backward_inplace),
//    overwritten and accumulated, through views and raw pointers: the
//    reference of a problem whose dinp starts as dout's values, for N across
//    the host blocks and the packs;
//  - GeluForwardInPlace.*: llmk::gelu_forward with out = inp, the same array
//    (GELU in place), overwritten and accumulated, both implementations.
#include "support/compare.hpp"
#include "support/offset_array.hpp"
#include "support/test_space.hpp"

#include <gtest/gtest.h>
#include <llmk/gelu_backward.hpp>
#include <llmk/gelu_forward.hpp>
#include <ops/gelu_backward/reference/reference.hpp>
#include <ops/gelu_forward/reference.hpp>

#include <array>
#include <cmath>
#include <type_traits>
#include <limits>
#include <string>
#include <vector>

namespace {

using Space = llmk_test::TestSpace;
using llmk::reference::Precision;
namespace gelu = llmk::reference::gelu;

// The element type of a precision's arrays, and conversions of host values.
template <class T>
constexpr Precision precision_of = std::is_same_v<T, float> ? Precision::fp32 : Precision::bf16;

template <class T>
using OffsetArray = llmk_test::OffsetArray<T, Space>;

// dinp after one call of `impl` with the arrays at these offsets.
template <class T>
std::vector<float> run(const gelu::HostProblem& p, const std::string& impl, int o_dinp,
                       int o_dout, int o_inp, bool overwrite, std::vector<float>* storage = nullptr) {
  OffsetArray<T> dinp(p.dinp, o_dinp, 7.0f), dout(p.dout, o_dout, 0.0f), inp(p.inp, o_inp, 0.0f);
  llmk::GeluBackwardOptions options;
  options.impl = impl;
  options.dinp_update = overwrite ? llmk::Update::overwrite : llmk::Update::accumulate;
  llmk::gelu_backward(Space(), llmk::BufferRef(dinp.data()), llmk::ConstBufferRef(dout.data()),
                      llmk::ConstBufferRef(inp.data()), dinp.n, options);
  Space().fence();
  if (storage) *storage = dinp.all();
  return dinp.range();
}

template <class T>
void check_alignments(std::int64_t N) {
  constexpr int pack = int(16 / sizeof(T));
  const gelu::HostProblem p = gelu::make_problem({"a", 1, 1, N}, 77, precision_of<T>);
  for (const bool overwrite : {false, true}) {
    const std::vector<double> ref = gelu::reference_backward(p, overwrite);
    std::vector<std::array<int, 3>> offsets;
    for (int k = 0; k < pack; ++k) offsets.push_back({k, k, k});  // alike: head + packs + tail
    offsets.push_back({0, 1, 0});  // apart: element by element
    offsets.push_back({1, 0, 0});
    offsets.push_back({0, 0, pack - 1});
    for (const auto& o : offsets) {
      SCOPED_TRACE("N = " + std::to_string(N) + ", offsets dinp " + std::to_string(o[0]) +
                   " dout " + std::to_string(o[1]) + " inp " + std::to_string(o[2]) +
                   (overwrite ? ", overwrite" : ", accumulate"));
      std::vector<float> storage;
      const std::vector<float> packed = run<T>(p, "packed", o[0], o[1], o[2], overwrite, &storage);
      const std::vector<float> naive = run<T>(p, "naive", o[0], o[1], o[2], overwrite);
      EXPECT_TRUE(llmk_test::matches_reference("dinp", packed, ref, 0, gelu::tolerance(precision_of<T>)));
      // Element by element (one misplaced element shows at any N): the two
      // kernels' loops are compiled apart, and may contract a·b + c into an
      // FMA differently (-ffp-contract=fast): measured 1 ulp apart.
      const double rel = std::is_same_v<T, float> ? 1e-6 : 8e-3;
      // (Relative to the terms: += may cancel; |gelu'| < 1.13.)
      for (std::size_t i = 0; i < packed.size(); ++i) {
        const double terms = std::abs(double(naive[i])) + std::abs(double(p.dinp[i])) +
                             1.13 * std::abs(double(p.dout[i]));
        ASSERT_LE(std::abs(double(packed[i]) - naive[i]), rel * terms)
            << "element " << i << ": packed " << packed[i] << ", naive " << naive[i];
      }
      for (std::size_t i = 0; i < storage.size(); ++i) {
        if (std::int64_t(i) >= o[0] && std::int64_t(i) < o[0] + N) continue;
        ASSERT_EQ(storage[i], 7.0f) << "dinp's storage element " << i << " written";
      }
    }
  }
}

TEST(GeluBackwardAlignment, Fp32) {
  for (std::int64_t N : {1, 3, 4, 5, 7, 8, 9, 1031}) check_alignments<float>(N);
}
TEST(GeluBackwardAlignment, Bf16) {
  for (std::int64_t N : {1, 7, 8, 9, 15, 16, 17, 1031}) check_alignments<llmk::bf16>(N);
}

TEST(GeluBackwardViews, RowsOfCSameBitsAsRaw) {
  const gelu::HostProblem p = gelu::make_problem({"r1", 3, 5, 7}, 5, Precision::fp32);
  const auto device = [](const std::vector<float>& v) {
    Kokkos::View<float*, Space> d("r1", v.size());
    auto h = Kokkos::create_mirror_view(d);
    for (std::size_t i = 0; i < v.size(); ++i) h(i) = v[i];
    Kokkos::deep_copy(d, h);
    return d;
  };
  for (const char* impl : {"packed", "naive"}) {
    auto dinp1 = device(p.dinp), dinp2 = device(p.dinp), dout = device(p.dout), inp = device(p.inp);
    llmk::GeluBackwardOptions options;
    options.impl = impl;
    llmk::gelu_backward(Space(), llmk::BufferRef(dinp1.data()), llmk::ConstBufferRef(dout.data()),
                        llmk::ConstBufferRef(inp.data()), 105, options);
    using Matrix = Kokkos::View<float**, Kokkos::LayoutRight, Space, Kokkos::MemoryUnmanaged>;
    using CMatrix = Kokkos::View<const float**, Kokkos::LayoutRight, Space, Kokkos::MemoryUnmanaged>;
    llmk::gelu_backward(Space(), Matrix(dinp2.data(), 15, 7), CMatrix(dout.data(), 15, 7),
                        CMatrix(inp.data(), 15, 7), options);
    Space().fence();
    auto h1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dinp1);
    auto h2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dinp2);
    EXPECT_TRUE(llmk_test::bitwise_equal(impl, h1.data(), h2.data(), p.dinp.size()));
    std::vector<float> out(h1.data(), h1.data() + h1.extent(0));
    EXPECT_TRUE(llmk_test::matches_reference("dinp", out, gelu::reference_backward(p), 7));
  }
}

// gelu' where it is 0, ½, 1 or its tails, NaN where the formula is ∞·0.
TEST(GeluBackwardSpecialValues, Fp32) {
  const float inf = std::numeric_limits<float>::infinity(),
              nan = std::numeric_limits<float>::quiet_NaN();
  gelu::HostProblem p;
  p.inp = {0.0f, -0.0f, 3.0f, -3.0f, 10.0f, -10.0f, 1e6f, -1e6f, 1e12f, -1e12f, nan, inf, -inf,
           -0.7517916f};  // (gelu'(x) ≈ 0 near x = −0.7518)
  p.shape = {"special", 1, 1, std::int64_t(p.inp.size())};
  p.dout.assign(p.inp.size(), 2.0f);
  p.dinp.assign(p.inp.size(), 0.0f);
  const std::vector<double> ref = gelu::reference_backward(p, true);
  for (const char* impl : {"packed", "naive"}) {
    const std::vector<float> out = run<float>(p, impl, 0, 0, 0, true);
    for (std::size_t i = 0; i < out.size(); ++i) {
      SCOPED_TRACE(std::string(impl) + ": gelu'(" + std::to_string(p.inp[i]) + ") · 2");
      if (std::isnan(ref[i])) {
        EXPECT_TRUE(std::isnan(out[i])) << out[i];
      } else {
        EXPECT_NEAR(out[i], ref[i], 1e-6 * std::max(1.0, std::abs(ref[i])));
      }
    }
    EXPECT_EQ(out[0], 1.0f);  // gelu'(0) = ½ exactly: ½·(1 + 0) + 0
    EXPECT_EQ(out[1], 1.0f);
  }
}

// dinp over dout: the same array, through the raw entry and (M, C) views.
template <class T>
void check_in_place(std::int64_t N) {
  const gelu::HostProblem p = gelu::make_problem({"inplace", 1, 1, N}, 31, precision_of<T>);
  gelu::HostProblem same = p;
  same.dinp = p.dout;  // what the call reads as dinp when it accumulates
  for (const bool overwrite : {false, true}) {
    const std::vector<double> ref = gelu::reference_backward(same, overwrite);
    for (const bool views : {false, true}) {
      for (const char* impl : {"packed", "naive"}) {
        SCOPED_TRACE(std::string(impl) + ", N = " + std::to_string(N) +
                     (overwrite ? ", overwrite" : ", accumulate") + (views ? ", views" : ", raw"));
        OffsetArray<T> d(p.dout, 0, 7.0f), inp(p.inp, 0, 0.0f);
        llmk::GeluBackwardOptions options;
        options.impl = impl;
        options.dinp_update = overwrite ? llmk::Update::overwrite : llmk::Update::accumulate;
        if (views) {
          using Matrix = Kokkos::View<T**, Kokkos::LayoutRight, Space, Kokkos::MemoryUnmanaged>;
          using CMatrix =
              Kokkos::View<const T**, Kokkos::LayoutRight, Space, Kokkos::MemoryUnmanaged>;
          llmk::gelu_backward(Space(), Matrix(d.data(), N, 1), CMatrix(d.data(), N, 1),
                              CMatrix(inp.data(), N, 1), options);
        } else {
          llmk::gelu_backward(Space(), llmk::BufferRef(d.data()), llmk::ConstBufferRef(d.data()),
                              llmk::ConstBufferRef(inp.data()), N, options);
        }
        Space().fence();
        EXPECT_TRUE(llmk_test::matches_reference("dinp", d.range(), ref, 0,
                                                 gelu::tolerance(precision_of<T>)));
      }
    }
  }
}

TEST(GeluBackwardInPlace, Fp32) {
  for (std::int64_t N : {1, 7, 1031, 20000}) check_in_place<float>(N);
}
TEST(GeluBackwardInPlace, Bf16) {
  for (std::int64_t N : {1, 17, 1031, 20000}) check_in_place<llmk::bf16>(N);
}

// gelu_forward's out over inp: the reference of a problem whose out starts
// as inp's values.
template <class T>
void check_forward_in_place(std::int64_t N) {
  namespace fwd = llmk::reference::gelu_forward;
  fwd::HostProblem p = fwd::make_problem({"inplace", 1, 1, N}, 37, precision_of<T>);
  p.out = p.inp;
  for (const bool overwrite : {false, true}) {
    const std::vector<double> ref = fwd::reference_forward(p, overwrite);
    for (const char* impl : {"packed", "naive"}) {
      SCOPED_TRACE(std::string(impl) + ", N = " + std::to_string(N) +
                   (overwrite ? ", overwrite" : ", accumulate"));
      OffsetArray<T> x(p.inp, 0, 7.0f);
      llmk::GeluForwardOptions options;
      options.impl = impl;
      options.out_update = overwrite ? llmk::Update::overwrite : llmk::Update::accumulate;
      llmk::gelu_forward(Space(), llmk::BufferRef(x.data()), llmk::ConstBufferRef(x.data()), N,
                         options);
      Space().fence();
      EXPECT_TRUE(
          llmk_test::matches_reference("out", x.range(), ref, 0, fwd::tolerance(precision_of<T>)));
    }
  }
}

TEST(GeluForwardInPlace, Fp32) {
  for (std::int64_t N : {1, 7, 1031, 20000}) check_forward_in_place<float>(N);
}
TEST(GeluForwardInPlace, Bf16) {
  for (std::int64_t N : {1, 17, 1031, 20000}) check_forward_in_place<llmk::bf16>(N);
}

}  // namespace
