// kernels/gemm_tiled.hpp's register-tile path (the GPU's: one micro-tile a
// thread over all of K, pack loads, two scratch buffers filled through
// registers or AsyncCopy, split-K by waves) in matmul's two forms (dinp: NN
// with GELU's factor; dweight: TN with the fused dbias) against a float64
// sum, on every space of the build. On a host space it runs through a small
// host tuning of that path (support/tiled_tunings.hpp), so CI, which has no
// GPU, covers it; on Cuda through the shipped tuning. Each tuning comes in
// two team counts, so that the same shapes run unsplit and split into
// several K ranges (asserted through the workspace the split takes). The
// general forms: test_tiled_gemm_forms.cpp. The reference is independent of
// llmk's kernels: bf16 values go through llmk_reference's rounding (as bits),
// gelu' is the reference's, the sums float64.
#include "support/test_space.hpp"

#include <core/reference/bf16.hpp>
#include <gtest/gtest.h>
#include <kernels/gemm_tiled.hpp>
#include <ops/matmul_backward/reference/reference.hpp>
#include <support/tiled_tunings.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

using Space = llmk_test::TestSpace;
using llmk::bf16;
using llmk::index_t;

using llmk_test::RegisterTuning;
using Splitting = RegisterTuning<Space, llmk_test::kSplitting>;
using Unsplit = RegisterTuning<Space, llmk_test::kUnsplit>;
using SplittingAsync = RegisterTuning<Space, llmk_test::kSplitting, true>;
constexpr bool kCuda = llmk_test::is_cuda<Space>();

struct Shape {
  index_t R, N, K;
};

template <class T>
using Mat = Kokkos::View<T**, Kokkos::LayoutRight, Space>;

// An element of T from its value (bf16: the reference library's rounding,
// stored as bits), and back.
template <class T>
T store(float x) {
  if constexpr (std::is_same_v<T, bf16>) {
    const std::uint16_t bits = llmk::reference::float_to_bf16_bits(x);
    T t;
    std::memcpy(&t, &bits, sizeof t);
    return t;
  } else {
    return x;
  }
}
template <class T>
double load(const T& t) {
  if constexpr (std::is_same_v<T, bf16>) {
    std::uint16_t bits;
    std::memcpy(&bits, &t, sizeof bits);
    return double(llmk::reference::bf16_bits_to_float(bits));
  } else {
    return double(t);
  }
}

template <class T>
Mat<T> random_matrix(const char* label, index_t rows, index_t cols, std::mt19937& rng,
                     std::vector<double>& values) {
  Mat<T> m(std::string(label), rows, cols);
  auto h = Kokkos::create_mirror_view(m);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  values.resize(rows * cols);
  for (index_t i = 0; i < rows * cols; ++i) {
    h.data()[i] = store<T>(dist(rng));
    values[i] = load(h.data()[i]);
  }
  Kokkos::deep_copy(m, h);
  return m;
}

// D ⟵ op(A)·B (⊙ gelu'(pre) for dinp), dbias ⟵ Σ_k op(A) for dweight, through
// TiledGemm with Tuning in matmul's forms (NN with GELU's epilogue, TN with
// the fused bias); checked against float64 sums of the same inputs.
template <bool TransA, class TIn, class TD, class Tuning>
void check_product(const Shape& s, const bool overwrite, const bool split_expected) {
  SCOPED_TRACE(std::string(TransA ? "dweight" : "dinp") + " R=" + std::to_string(s.R) +
               " N=" + std::to_string(s.N) + " K=" + std::to_string(s.K) +
               (overwrite ? " =" : " +="));
  using namespace llmk::kernels;
  using Epilogue = std::conditional_t<TransA, PlainEpilogue, GeluGradEpilogue<TIn>>;
  using Gemm = TiledGemm<GemmForm<TransA, false>, Space, TIn, TD, Epilogue,
                         std::conditional_t<TransA, float, void>, Tuning>;
  std::mt19937 rng(unsigned(s.R * 7919 + s.N * 31 + s.K));
  std::vector<double> a, b, p, d0;
  const Mat<TIn> A = TransA ? random_matrix<TIn>("A", s.K, s.R, rng, a)
                            : random_matrix<TIn>("A", s.R, s.K, rng, a);
  const Mat<TIn> B = random_matrix<TIn>("B", s.K, s.N, rng, b);
  const Mat<TIn> pre = random_matrix<TIn>("pre", TransA ? 0 : s.R, s.N, rng, p);
  const Mat<TD> D = random_matrix<TD>("D", s.R, s.N, rng, d0);
  Kokkos::View<float*, Kokkos::LayoutRight, Space> dbias("dbias", s.R);
  Kokkos::deep_copy(dbias, 0.5f);
  if (overwrite) Kokkos::deep_copy(D, store<TD>(std::nanf("")));  // never read

  const GemmShape shape{s.R, s.N, s.K};
  const std::size_t ws = Gemm::split_k_workspace(shape, TransA);
  EXPECT_EQ(ws > 0, split_expected) << "workspace " << ws << " floats";
  Kokkos::View<float*, Space> workspace("workspace", ws + 1);
  Epilogue epilogue{};
  if constexpr (!TransA) epilogue = Epilogue::of(pre);
  Gemm gemm(shape, gemm_operand(D), gemm_operand(A), gemm_operand(B), overwrite, epilogue);
  if constexpr (TransA) gemm.with_bias(dbias, false);
  gemm.with_split_k(workspace.data()).run(Space(), "test_register_tiles");
  Kokkos::fence();

  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), D);
  auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dbias);
  // The error model of a float32 sum of K products t_k (exact for bf16
  // inputs, rounded once for float ones) in any order or split: each
  // addition rounds its partial sum S_j by ≤ u = 2⁻²⁴, random-sign terms
  // keep |S_j| ≈ √j·rms(t), so the error Σ δ_j·S_j has a standard deviation
  // of u·√(K/6)·‖t‖₂: 10 of those (≈ 2e-5 of a sum at K = 8192, where one
  // product is ≈ 1% of it: K·2⁻²³·Σ|t| was 6.6%, which let any one product
  // go missing); + u·‖t‖₂ for float products; + 2u·(|want| + |initial|) for
  // the factor's product and the initial value's addition; + 2e-6·|sum| for
  // gelu' in float (its tanhf the device's on a GPU; near its zero it has no
  // relative accuracy: good to ~1e-6); + one bf16 rounding (2⁻⁸·|want|).
  constexpr double u = 0x1p-24;
  const double sum_model = 10 * u * std::sqrt(double(s.K) / 6) + (std::is_same_v<TIn, float> ? u : 0);
  const double out_eps = std::is_same_v<TD, bf16> ? 0x1p-8 : 0.0;
  int bad = 0;
  for (index_t r = 0; r < s.R; ++r) {
    double bias = 0, bias_sq = 0;
    for (index_t c = 0; c < s.N; ++c) {
      double sum = 0, sq = 0;
      for (index_t k = 0; k < s.K; ++k) {
        const double ak = TransA ? a[k * s.R + r] : a[r * s.K + k];
        const double t = ak * b[k * s.N + c];
        sum += t;
        sq += t * t;
        if (c == 0) bias += ak, bias_sq += ak * ak;
      }
      double factor = 1;
      if (!TransA) factor = llmk::reference::gelu_grad(p[r * s.N + c]);
      const double initial = overwrite ? 0.0 : d0[r * s.N + c];
      const double want = sum * factor + initial;
      const double got = load(h(r, c));
      const double tol = sum_model * std::sqrt(sq) * std::abs(factor) +
                         (TransA ? 0.0 : 2e-6 * std::abs(sum)) +
                         2 * u * (std::abs(want) + std::abs(initial)) + out_eps * std::abs(want);
      if (!(std::abs(got - want) <= tol) && ++bad <= 5)
        ADD_FAILURE() << "D(" << r << ", " << c << ") = " << got << ", want " << want
                      << " (tolerance " << tol << ")";
    }
    if (TransA) {
      const double want = 0.5 + bias, got = hb(r);
      if (!(std::abs(got - want) <= sum_model * std::sqrt(bias_sq) + 2 * u * (std::abs(want) + 0.5)) &&
          ++bad <= 5)
        ADD_FAILURE() << "dbias(" << r << ") = " << got << ", want " << want;
    }
  }
  EXPECT_EQ(bad, 0);

  // Bitwise the same when run again (overwriting).
  if (overwrite) {
    gemm.run(Space(), "test_register_tiles_again");
    Kokkos::fence();
    auto again = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), D);
    EXPECT_EQ(std::memcmp(again.data(), h.data(), h.size() * sizeof(TD)), 0);
  }
}

// Shapes: tile-aligned and not, a K shorter than a chunk, packs possible and
// not (odd row lengths fall back to element loads), a long K.
std::vector<Shape> shapes() {
  // (And sums of 8192, the seed's longest, on few elements: one product
  // missing from them must fail the tolerance.)
  if (kCuda) return {{256, 128, 512}, {300, 260, 100}, {130, 131, 1000}, {1, 3, 5}, {4, 5, 8192}};
  return {{16, 16, 64}, {13, 21, 37}, {24, 8, 3}, {1, 3, 5}, {40, 17, 200}, {4, 5, 8192}};
}

template <class TIn, class TD>
void check_all() {
  for (const Shape& s : shapes()) {
    for (const bool overwrite : {true, false}) {
      // One chunk has nothing to split.
      const bool splits = s.K > Splitting::bk;
      check_product<false, TIn, TD, Splitting>(s, overwrite, splits);
      check_product<true, TIn, TD, Splitting>(s, overwrite, splits);
      check_product<false, TIn, TD, Unsplit>(s, overwrite, false);
      check_product<true, TIn, TD, Unsplit>(s, overwrite, false);
      if constexpr (std::is_same_v<TIn, float>) {  // (bf16 goes through registers)
        check_product<false, TIn, TD, SplittingAsync>(s, overwrite, splits);
        check_product<true, TIn, TD, SplittingAsync>(s, overwrite, splits);
      }
    }
  }
}

TEST(TiledRegisterTiles, Float) { check_all<float, float>(); }
TEST(TiledRegisterTiles, Bf16InFloatOut) { check_all<bf16, float>(); }
TEST(TiledRegisterTiles, Bf16) { check_all<bf16, bf16>(); }

}  // namespace
