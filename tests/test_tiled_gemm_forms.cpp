// kernels/gemm_tiled.hpp's general forms, those attention's backward needs:
// every transpose pair (NN, NT, TN, TT), batches of outer × inner products
// whose operands each have their own two strides (matrices side by side
// within rows, as attention's heads in qkv, or each in its own block of
// rows), leading dimensions longer than the rows, and α (ScaleEpilogue). On
// every space, through each path of the kernel (support/tiled_tunings.hpp):
// register tiles (on a host through a small host tuning: split and unsplit,
// through registers and through AsyncCopy, scratch rows padded or not), the
// host's sub-tiles (small tiles: exact chunks or not, split and unsplit) and
// the shipped tuning, split and unsplit (asserted through the workspace).
// Float and bf16 inputs, float and bf16 D, = and +=, odd sizes, K = 0;
// against float64 sums written here from the operands' layouts. Outside the
// matrices the inputs hold NaN (read into a sum, it would show) and D a
// pattern that must come back bitwise; an overwritten D starts as NaN.
#include "support/test_space.hpp"

#include <gtest/gtest.h>
#include <kernels/gemm_tiled.hpp>
#include <support/tiled_tunings.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using Space = llmk_test::TestSpace;
using llmk::bf16;
using llmk::index_t;
namespace kn = llmk::kernels;
constexpr bool kCuda = llmk_test::is_cuda<Space>();

// How an operand's matrices lie in its buffer.
enum class Layout {
  Interleaved,  // side by side within rows (inner), blocks of rows (outer): qkv's heads
  Stacked,      // each matrix its own block of rows, the inner ones, then the outer
};

// Where matrix (o, i)'s element (r, c) is: o·outer + i·inner + r·ld + c.
struct Placement {
  index_t rows, row_len, ld, outer, inner, size;
  index_t at(index_t o, index_t i, index_t r, index_t c) const {
    return o * outer + i * inner + r * ld + c;
  }
};

// rows × row_len matrices of an outer_n × inner_n batch, laid out with
// `pad` elements more than needed in ld and between matrices.
Placement place(index_t rows, index_t row_len, index_t outer_n, index_t inner_n, Layout layout,
                index_t pad) {
  Placement p{rows, row_len, 0, 0, 0, 0};
  if (layout == Layout::Interleaved) {
    p.inner = row_len + pad;
    p.ld = inner_n * p.inner + pad;
    p.outer = rows * p.ld;
  } else {
    p.ld = row_len + pad;
    p.inner = rows * p.ld + pad;
    p.outer = inner_n * p.inner + pad;
  }
  // No element past the last matrix's: a read beyond it leaves the
  // allocation (for the sanitizers to see).
  const bool empty = outer_n == 0 || inner_n == 0 || rows == 0 || row_len == 0;
  p.size = empty ? 1 : (outer_n - 1) * p.outer + (inner_n - 1) * p.inner + (rows - 1) * p.ld + row_len;
  return p;
}

struct OperandSpec {
  Layout layout;
  index_t pad;
};

struct Case {
  std::string name;
  index_t R, N, K, outer, inner;
  float alpha;  // 1: the epilogue's identity (a host's sums may then accumulate in a float D)
  OperandSpec d, a, b;
};

// Odd sizes (not multiples of any tile or pack) with odd paddings; sizes
// and paddings of whole packs and tiles (the 16-byte load paths) with α = 1;
// a K of several of the shipped host tuning's chunks with attention's
// α = 1/√64; K = 0.
std::vector<Case> cases(const bool batched) {
  const index_t o = batched ? 2 : 1, i = batched ? 3 : 1;
  using L = Layout;
  if (kCuda)
    return {{"odd", 130, 70, 100, o, i, -0.37f, {L::Interleaved, 1}, {L::Stacked, 3}, {L::Interleaved, 2}},
            {"packs", 256, 128, 64, o, batched ? 2 : 1, 1.0f, {L::Stacked, 4}, {L::Interleaved, 4},
             {L::Stacked, 8}},
            {"deep", 40, 64, 1000, 1, batched ? 2 : 1, 0.125f, {L::Interleaved, 0}, {L::Interleaved, 4},
             {L::Stacked, 1}},
            {"k0", 3, 5, 0, 1, batched ? 2 : 1, -0.37f, {L::Stacked, 1}, {L::Stacked, 1}, {L::Stacked, 1}}};
  return {{"odd", 13, 11, 7, o, i, -0.37f, {L::Interleaved, 1}, {L::Stacked, 3}, {L::Interleaved, 2}},
          {"packs", 16, 16, 16, o, batched ? 2 : 1, 1.0f, {L::Stacked, 4}, {L::Interleaved, 4},
           {L::Stacked, 8}},
          {"deep", 5, 9, 300, 1, batched ? 2 : 1, 0.125f, {L::Interleaved, 0}, {L::Interleaved, 4},
           {L::Stacked, 1}},
          {"k0", 3, 5, 0, 1, batched ? 2 : 1, -0.37f, {L::Stacked, 1}, {L::Stacked, 1}, {L::Stacked, 1}}};
}

template <class T>
using Buffer = Kokkos::View<T*, Kokkos::LayoutRight, Space>;

// A buffer of NaN (or `outside(e)` at element e) but for the matrices of p,
// which get random values (or NaN: poison) recorded as doubles in `values`.
template <class T, class Outside>
Buffer<T> make_buffer(const char* label, const Placement& p, index_t outer_n, index_t inner_n,
                      std::mt19937& rng, const bool poison, const Outside& outside,
                      std::vector<double>& values) {
  Buffer<T> buf(std::string(label), p.size);
  auto h = Kokkos::create_mirror_view(buf);
  for (index_t e = 0; e < p.size; ++e) h(e) = T(outside(e));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  values.assign(p.size, std::nan(""));
  for (index_t o = 0; o < outer_n; ++o)
    for (index_t i = 0; i < inner_n; ++i)
      for (index_t r = 0; r < p.rows; ++r)
        for (index_t c = 0; c < p.row_len; ++c) {
          const index_t e = p.at(o, i, r, c);
          h(e) = poison ? T(std::nanf("")) : T(dist(rng));
          values[e] = double(float(h(e)));
        }
  Kokkos::deep_copy(buf, h);
  return buf;
}

// D ⟵ α·op(A)·op(B) (= or +=) through TiledGemm<Form, …, Tuning>, checked
// against float64 sums; an overwrite is run twice and must give the same bits.
template <bool TA, bool TB, bool Batched, class TIn, class TD, class Tuning>
void check_case(const Case& cs, const bool overwrite, const char* tuning) {
  SCOPED_TRACE(std::string(TA ? "T" : "N") + (TB ? "T" : "N") + (Batched ? " batched " : " ") +
               cs.name + " " + tuning + (overwrite ? " =" : " +="));
  using Gemm = kn::TiledGemm<kn::GemmForm<TA, TB, Batched>, Space, TIn, TD, kn::ScaleEpilogue,
                             void, Tuning>;
  const index_t R = cs.R, N = cs.N, K = cs.K, on = cs.outer, in = cs.inner;
  const float alpha = cs.alpha;
  const Placement pd = place(R, N, on, in, cs.d.layout, cs.d.pad);
  const Placement pa = TA ? place(K, R, on, in, cs.a.layout, cs.a.pad)
                          : place(R, K, on, in, cs.a.layout, cs.a.pad);
  const Placement pb = TB ? place(N, K, on, in, cs.b.layout, cs.b.pad)
                          : place(K, N, on, in, cs.b.layout, cs.b.pad);
  std::mt19937 rng(unsigned(R * 7919 + N * 31 + K + on * 3 + in));
  std::vector<double> a, b, d0;
  auto nan = [](index_t) { return std::nanf(""); };
  auto pattern = [](index_t e) { return float(1000 + e % 97); };  // D outside its matrices
  const Buffer<TIn> A = make_buffer<TIn>("A", pa, on, in, rng, false, nan, a);
  const Buffer<TIn> B = make_buffer<TIn>("B", pb, on, in, rng, false, nan, b);
  const Buffer<TD> D = make_buffer<TD>("D", pd, on, in, rng, overwrite, pattern, d0);
  const auto d_before = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), D);

  const kn::GemmShape shape{R, N, K, on, in};
  const std::size_t ws = Gemm::split_k_workspace(shape, false);
  const bool splits = Tuning::resident_teams() > 1 && (K + Tuning::bk - 1) / Tuning::bk >= 2;
  EXPECT_EQ(ws > 0, splits) << "workspace " << ws << " floats";
  Buffer<float> workspace("workspace", ws + 1);
  const Gemm gemm = Gemm(shape, {D.data(), pd.ld, pd.outer, pd.inner},
                         {A.data(), pa.ld, pa.outer, pa.inner}, {B.data(), pb.ld, pb.outer, pb.inner},
                         overwrite, kn::ScaleEpilogue{alpha})
                        .with_split_k(workspace.data());
  gemm.run(Space(), "test_gemm_forms");
  Kokkos::fence();
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), D);

  // A float sum of K products is within K·2⁻²⁴·Σ|terms| of the exact sum
  // (any order of summation); then α·sum, the += and a bf16 D round once each.
  const double out_eps = std::is_same_v<TD, bf16> ? 0x1p-8 : 0.0;
  std::vector<bool> in_matrix(pd.size, false);
  int bad = 0;
  for (index_t o = 0; o < on; ++o)
    for (index_t i = 0; i < in; ++i)
      for (index_t r = 0; r < R; ++r)
        for (index_t c = 0; c < N; ++c) {
          double sum = 0, abs = 0;
          for (index_t k = 0; k < K; ++k) {
            const double x = TA ? a[pa.at(o, i, k, r)] : a[pa.at(o, i, r, k)];
            const double y = TB ? b[pb.at(o, i, c, k)] : b[pb.at(o, i, k, c)];
            sum += x * y;
            abs += std::abs(x * y);
          }
          const index_t e = pd.at(o, i, r, c);
          in_matrix[e] = true;
          const double scaled = double(alpha) * sum;
          const double want = scaled + (overwrite ? 0.0 : d0[e]);
          const double got = double(float(h(e)));
          const double tol = std::abs(double(alpha)) * K * 0x1p-24 * abs * 1.01 +
                             0x1p-24 * std::abs(scaled) + (0x1p-24 + out_eps) * std::abs(want) * 1.01;
          if (!(std::abs(got - want) <= tol) && ++bad <= 5)
            ADD_FAILURE() << "D[" << o << ", " << i << "](" << r << ", " << c << ") = " << got
                          << ", want " << want << " (tolerance " << tol << ")";
        }
  for (index_t e = 0; e < pd.size; ++e)
    if (!in_matrix[e] && std::memcmp(&h(e), &d_before(e), sizeof(TD)) != 0 && ++bad <= 5)
      ADD_FAILURE() << "D's element " << e << " outside the matrices was written";
  EXPECT_EQ(bad, 0);

  if (overwrite) {
    gemm.run(Space(), "test_gemm_forms_again");
    Kokkos::fence();
    const auto again = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), D);
    EXPECT_EQ(std::memcmp(again.data(), h.data(), h.size() * sizeof(TD)), 0);
  }
}

using llmk_test::kSplitting;
using llmk_test::kUnsplit;
template <int Slots, bool Async = false, int Pad = 0>
using Register = llmk_test::RegisterTuning<Space, Slots, Async, Pad>;
template <int Slots>
using Shipped = llmk_test::Shipped<Space, Slots>;

// Every case, = and +=, through every path; Few: fewer tunings (the
// unbatched forms, whose code differs from the batched only by the batch
// offsets it leaves out).
template <bool TA, bool TB, bool Batched, class TIn, class TD, bool Few = false>
void check_form() {
  constexpr bool f32 = std::is_same_v<TIn, float>;  // (AsyncCopy: float inputs only)
  for (const Case& cs : cases(Batched)) {
    for (const bool overwrite : {true, false}) {
      if constexpr (kCuda) {
        check_case<TA, TB, Batched, TIn, TD, Register<kSplitting>>(cs, overwrite, "split");
        if constexpr (!Few) {
          check_case<TA, TB, Batched, TIn, TD, Register<kUnsplit>>(cs, overwrite, "unsplit");
          if constexpr (f32)
            check_case<TA, TB, Batched, TIn, TD, Register<kSplitting, true>>(cs, overwrite,
                                                                             "async split");
        }
      } else {
        using llmk_test::HostSubTiles;
        check_case<TA, TB, Batched, TIn, TD, Register<kSplitting, false, 4>>(cs, overwrite,
                                                                             "registers split pad");
        check_case<TA, TB, Batched, TIn, TD, HostSubTiles<kSplitting, true>>(cs, overwrite,
                                                                             "sub-tiles exact split");
        check_case<TA, TB, Batched, TIn, TD, Shipped<kSplitting>>(cs, overwrite, "shipped split");
        if constexpr (!Few) {
          check_case<TA, TB, Batched, TIn, TD, Register<kUnsplit>>(cs, overwrite,
                                                                   "registers unsplit");
          if constexpr (f32)
            check_case<TA, TB, Batched, TIn, TD, Register<kSplitting, true, 4>>(
                cs, overwrite, "registers async split pad");
          check_case<TA, TB, Batched, TIn, TD, HostSubTiles<kUnsplit, false>>(cs, overwrite,
                                                                              "sub-tiles unsplit");
          check_case<TA, TB, Batched, TIn, TD, Shipped<kUnsplit>>(cs, overwrite, "shipped unsplit");
        }
      }
    }
  }
}

#define LLMK_FORM_TESTS(NAME, TA, TB, BATCHED, FEW)                                 \
  TEST(TiledGemmForms, NAME##_Float) { check_form<TA, TB, BATCHED, float, float, FEW>(); } \
  TEST(TiledGemmForms, NAME##_Bf16InFloatOut) {                                     \
    check_form<TA, TB, BATCHED, bf16, float, FEW>();                                \
  }                                                                                 \
  TEST(TiledGemmForms, NAME##_Bf16) { check_form<TA, TB, BATCHED, bf16, bf16, FEW>(); }

LLMK_FORM_TESTS(NN_Batched, false, false, true, false)
LLMK_FORM_TESTS(NT_Batched, false, true, true, false)
LLMK_FORM_TESTS(TN_Batched, true, false, true, false)
LLMK_FORM_TESTS(TT_Batched, true, true, true, false)
LLMK_FORM_TESTS(NT, false, true, false, true)
LLMK_FORM_TESTS(TT, true, true, false, true)

// Bad descriptions: std::invalid_argument naming what is wrong, before any
// work (the constructor throws).
TEST(TiledGemmForms, BadArguments) {
  using Batched = kn::TiledGemm<kn::GemmForm<false, true, true>, Space>;
  using Single = kn::TiledGemm<kn::GemmForm<true, false>, Space>;
  Buffer<float> buf("buf", 64);
  float* p = buf.data();
  auto message = [](auto&& make) -> std::string {
    try {
      make();
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "(no exception)";
  };
  // D 3 × 4, op(A) 3 × 5 (A 3 × 5), op(B) 5 × 4 (B 4 × 5: NT).
  const kn::GemmShape s{3, 4, 5, 2, 2};
  EXPECT_NE(message([&] { Batched(s, {p, 3}, {p, 5}, {p, 5}, true); }).find("D.ld = 3"),
            std::string::npos);
  EXPECT_NE(message([&] { Batched(s, {p, 4}, {p, 4}, {p, 5}, true); }).find("A.ld = 4"),
            std::string::npos);
  EXPECT_NE(message([&] { Batched(s, {p, 4}, {p, 5}, {p, 4}, true); }).find("B.ld = 4"),
            std::string::npos);
  EXPECT_NE(message([&] { Batched({3, -4, 5}, {p, 4}, {p, 5}, {p, 5}, true); }).find("cols = -4"),
            std::string::npos);
  // TN unbatched: A 5 × 3, B 5 × 4; a batch of 2 is refused.
  EXPECT_NE(message([&] { Single({3, 4, 5, 2, 1}, {p, 4}, {p, 3}, {p, 4}, true); })
                .find("unbatched form takes outer = inner = 1"),
            std::string::npos);
  EXPECT_EQ(message([&] { Single({3, 4, 5}, {p, 4}, {p, 3}, {p, 4}, true); }), "(no exception)");
}

}  // namespace
