// kernels/gemm_tiled.hpp's triangles (kernels/gemm_operand.hpp), attention's
// causal mask a tile at a time: a_upper and a_lower cut each tile's K range,
// d_lower leaves out the tiles above D's diagonal. Through each path of the
// kernel (support/tiled_tunings.hpp: register tiles split and unsplit,
// through registers and AsyncCopy; the host's sub-tiles, exact chunks or
// not, split and unsplit; the shipped tuning and attention's), batched,
// float and bf16 D, = and +=, against float64 sums.
// What shows that the work is skipped, not only that the result is right:
// op(A)'s promised zeros hold NaN wherever a tile must not read them (k
// before its first row for a_upper, k past its last for a_lower: read into
// a sum, NaN would show), exact zeros only within the diagonal's tile; and
// the tiles d_lower leaves out must come back bitwise as they were (NaN
// when D is overwritten).
#include "support/test_space.hpp"

#include <gtest/gtest.h>
#include <kernels/attention_tuning.hpp>
#include <kernels/gemm_tiled.hpp>
#include <support/tiled_tunings.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

using Space = llmk_test::TestSpace;
using llmk::bf16;
using llmk::index_t;
namespace kn = llmk::kernels;
using kn::Triangle;
constexpr bool kCuda = llmk_test::is_cuda<Space>();

template <class T>
using Buffer = Kokkos::View<T*, Kokkos::LayoutRight, Space>;

// R × N products over K, `batch` of them, each operand's matrices stacked
// (ld = its row length + pad, a matrix after the other).
struct Case {
  const char* name;
  index_t R, N, K, batch, pad;
};

std::vector<Case> cases(const int bm) {
  // Square products as attention's (R = K = T) over a few tiles, the last
  // partial; one with more rows than K (a_upper's last tiles sum nothing);
  // pads of whole packs and an odd one.
  return {{"square", 3 * bm + 5, 13, 3 * bm + 5, 2, 4},
          {"packs", 4 * bm, 16, 4 * bm, 2, 0},
          {"tall", 3 * bm + 1, 9, bm + 3, 1, 1}};
}

const char* name(const Triangle t) {
  switch (t) {
    case Triangle::a_upper: return "a_upper";
    case Triangle::a_lower: return "a_lower";
    case Triangle::d_lower: return "d_lower";
    case Triangle::none: return "none";
  }
  return "?";
}

template <bool TA, bool TB, class TD, class Tuning>
void check_case(const Triangle tri, const Case& cs, const bool overwrite, const char* tuning) {
  using Gemm = kn::TiledGemm<kn::GemmForm<TA, TB, true>, Space, float, TD, kn::ScaleEpilogue,
                             void, Tuning>;
  constexpr int BM = Gemm::Config::BM, BN = Gemm::Config::BN;
  SCOPED_TRACE(std::string(name(tri)) + " " + (TA ? "T" : "N") + (TB ? "T" : "N") + " " +
               cs.name + " " + tuning + (overwrite ? " =" : " +="));
  const index_t R = cs.R, N = cs.N, K = cs.K, nb = cs.batch;
  // op(A)(r, k) at A[b·sa + (TA ? k·lda + r : r·lda + k)]; op(B)(k, n) likewise.
  const index_t lda = (TA ? R : K) + cs.pad, ldb = (TB ? K : N) + cs.pad, ldd = N + cs.pad;
  const index_t sa = (TA ? K : R) * lda, sb = (TB ? N : K) * ldb, sd = R * ldd;
  auto a_at = [&](index_t b, index_t r, index_t k) { return b * sa + (TA ? k * lda + r : r * lda + k); };
  auto b_at = [&](index_t b, index_t k, index_t n) { return b * sb + (TB ? n * ldb + k : k * ldb + n); };

  std::mt19937 rng(unsigned(R * 131 + N * 7 + K + int(tri)));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const float nan = std::nanf("");
  // A: random, but where the triangle promises zeros: 0 within the
  // diagonal's tile (read), NaN beyond it (never read). NaN outside the matrices.
  std::vector<float> a(std::size_t(nb * sa), nan), b(std::size_t(nb * sb), nan);
  for (index_t p = 0; p < nb; ++p)
    for (index_t r = 0; r < R; ++r)
      for (index_t k = 0; k < K; ++k) {
        float x = dist(rng);
        if (tri == Triangle::a_upper && k < r) x = k < r / BM * BM ? nan : 0.0f;
        if (tri == Triangle::a_lower && k > r) x = k >= (r / BM + 1) * BM ? nan : 0.0f;
        a[std::size_t(a_at(p, r, k))] = x;
      }
  for (index_t p = 0; p < nb; ++p)
    for (index_t k = 0; k < K; ++k)
      for (index_t n = 0; n < N; ++n) b[std::size_t(b_at(p, k, n))] = dist(rng);
  Buffer<float> A("A", a.size()), B("B", b.size());
  Buffer<TD> D("D", std::size_t(nb * sd));
  {
    Kokkos::View<const float*, Kokkos::HostSpace> ha(a.data(), a.size()), hb(b.data(), b.size());
    Kokkos::deep_copy(A, ha);
    Kokkos::deep_copy(B, hb);
  }
  auto hd0 = Kokkos::create_mirror(D);  // (a copy on every space: D is compared with it after)
  for (std::size_t e = 0; e < hd0.size(); ++e)
    hd0(e) = overwrite && index_t(e % sd) % ldd < N ? TD(nan) : TD(float(e % 97) / 64.0f - 0.7f);
  Kokkos::deep_copy(D, hd0);

  const float alpha = -0.75f;
  const kn::GemmShape shape{R, N, K, 1, nb, tri};
  Buffer<float> workspace("workspace", Gemm::split_k_workspace(shape, false) + 1);
  const Gemm gemm = Gemm(shape, {D.data(), ldd, 0, sd}, {A.data(), lda, 0, sa},
                         {B.data(), ldb, 0, sb}, overwrite, kn::ScaleEpilogue{alpha})
                        .with_split_k(workspace.data());
  gemm.run(Space(), "test_gemm_triangles");
  Kokkos::fence();
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), D);

  const double out_eps = std::is_same_v<TD, bf16> ? 0x1p-8 : 0.0;
  int bad = 0;
  for (index_t p = 0; p < nb; ++p)
    for (index_t r = 0; r < R; ++r)
      for (index_t n = 0; n < N; ++n) {
        const std::size_t e = std::size_t(p * sd + r * ldd + n);
        const bool skipped = tri == Triangle::d_lower && n / BN * BN >= r / BM * BM + BM;
        if (skipped) {
          if (std::memcmp(&h(e), &hd0(e), sizeof(TD)) != 0 && ++bad <= 5)
            ADD_FAILURE() << "D[" << p << "](" << r << ", " << n << "), in a tile above the "
                          << "diagonal (" << BM << " x " << BN << " tiles), was written";
          continue;
        }
        double sum = 0, abs = 0;
        for (index_t k = 0; k < K; ++k) {
          const float x = a[std::size_t(a_at(p, r, k))];
          if (std::isnan(x)) continue;  // a promised zero
          const double t = double(x) * double(b[std::size_t(b_at(p, k, n))]);
          sum += t;
          abs += std::abs(t);
        }
        const double scaled = double(alpha) * sum;
        const double want = scaled + (overwrite ? 0.0 : double(float(hd0(e))));
        const double got = double(float(h(e)));
        const double tol = std::abs(double(alpha)) * K * 0x1p-24 * abs * 1.01 +
                           0x1p-24 * std::abs(scaled) + (0x1p-24 + out_eps) * std::abs(want) * 1.01;
        if (!(std::abs(got - want) <= tol) && ++bad <= 5)
          ADD_FAILURE() << "D[" << p << "](" << r << ", " << n << ") = " << got << ", want "
                        << want << " (tolerance " << tol << ")";
      }
  // Between the matrices' rows (the pads), nothing is written.
  for (std::size_t e = 0; e < h.size(); ++e)
    if (index_t(e % sd) % ldd >= N && std::memcmp(&h(e), &hd0(e), sizeof(TD)) != 0 && ++bad <= 5)
      ADD_FAILURE() << "D's element " << e << ", a pad, was written";
  EXPECT_EQ(bad, 0);
}

using llmk_test::kSplitting;
using llmk_test::kUnsplit;
template <int Slots, bool Async = false, int Pad = 0>
using Register = llmk_test::RegisterTuning<Space, Slots, Async, Pad>;
template <int Slots>
using Shipped = llmk_test::Shipped<Space, Slots>;
template <int Slots>
using Heads = llmk_test::WithSlots<kn::AttentionTiledTuning<Space>, Slots>;

// Host sub-tiles of 6 rows over chunks of 4: a_lower's ranges then end
// inside a chunk, whose k past the end must be staged as zeros, not read.
struct SixRowSubTiles : llmk_test::HostSubTiles<kUnsplit, false> {
  static constexpr int bm = 6;
};

template <bool TA, bool TB, class TD, class Tuning>
void check_cases(const Triangle tri, const char* tuning) {
  using Gemm = kn::TiledGemm<kn::GemmForm<TA, TB, true>, Space, float, TD, kn::ScaleEpilogue,
                             void, Tuning>;
  for (const Case& cs : cases(Gemm::Config::BM))
    for (const bool overwrite : {true, false}) check_case<TA, TB, TD, Tuning>(tri, cs, overwrite, tuning);
}

// Every path of the kernel for a triangle and form.
template <bool TA, bool TB, class TD>
void check_paths(const Triangle tri) {
  check_cases<TA, TB, TD, Register<kSplitting>>(tri, "registers split");
  check_cases<TA, TB, TD, Register<kUnsplit>>(tri, "registers unsplit");
  check_cases<TA, TB, TD, Register<kSplitting, true>>(tri, "async split");
  check_cases<TA, TB, TD, Heads<kSplitting>>(tri, "attention's split");
  check_cases<TA, TB, TD, Heads<kUnsplit>>(tri, "attention's unsplit");
  if constexpr (!kCuda) {
    check_cases<TA, TB, TD, llmk_test::HostSubTiles<kSplitting, true>>(tri, "sub-tiles exact split");
    check_cases<TA, TB, TD, llmk_test::HostSubTiles<kUnsplit, false>>(tri, "sub-tiles unsplit");
    check_cases<TA, TB, TD, Shipped<kUnsplit>>(tri, "shipped unsplit");
    check_cases<TA, TB, TD, SixRowSubTiles>(tri, "sub-tiles of 6 rows");
  }
}

// attention's dv and dk (TN) and the NN form; dq (NN) and TN; datt (NT) and NN.
TEST(TiledGemmTriangles, AUpper) {
  check_paths<true, false, float>(Triangle::a_upper);
  check_paths<false, false, float>(Triangle::a_upper);
  check_paths<true, false, bf16>(Triangle::a_upper);
}
TEST(TiledGemmTriangles, ALower) {
  check_paths<false, false, float>(Triangle::a_lower);
  check_paths<true, false, float>(Triangle::a_lower);
  check_paths<false, false, bf16>(Triangle::a_lower);
}
TEST(TiledGemmTriangles, DLower) {
  check_paths<false, true, float>(Triangle::d_lower);
  check_paths<false, false, float>(Triangle::d_lower);
  check_paths<false, true, bf16>(Triangle::d_lower);
}

// K = 0 with d_lower: D ⟵ α·0 in the tiles kept, the others left as they were.
TEST(TiledGemmTriangles, DLowerNoDepth) {
  check_case<false, true, float, Shipped<kUnsplit>>(Triangle::d_lower, {"k0", 300, 300, 0, 1, 0},
                                                    true, "shipped");
}

// A fused bias sums whole rows of op(A): it takes no triangle.
TEST(TiledGemmTriangles, BiasRefusesATriangle) {
  using Gemm = kn::TiledGemm<kn::GemmForm<true, false>, Space, float, float, kn::PlainEpilogue, float>;
  Buffer<float> buf("buf", 64);
  Kokkos::View<float*, Kokkos::LayoutRight, Space> bias("bias", 4);
  Gemm gemm({4, 4, 4, 1, 1, Triangle::a_upper}, {buf.data(), 4}, {buf.data(), 4}, {buf.data(), 4},
            true);
  try {
    gemm.with_bias(bias, true);
    ADD_FAILURE() << "with_bias took a triangle";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("a fused bias takes no triangle"), std::string::npos)
        << e.what();
  }
}

}  // namespace
