// kernels/gemm_tiled.hpp's register-tile path (the GPU's: one micro-tile a
// thread over all of K, pack loads, two scratch buffers filled through
// registers or AsyncCopy, split-K by waves) in matmul's two forms (dinp: NN
// with GELU's factor; dweight: TN with the fused dbias) against a float64
// sum, on every space of the build. On a host space it runs through a small
// host tuning of that path (support/tiled_tunings.hpp), so CI, which has no
// GPU, covers it; on Cuda through the shipped tuning. Each tuning comes in
// two team counts, so that the same shapes run unsplit and split into
// several K ranges (asserted through the workspace the split takes). The
// general forms: test_tiled_gemm_forms.cpp.
#include <gtest/gtest.h>
#include <kernels/gemm_tiled.hpp>
#include <ops/matmul_backward/reference/reference.hpp>
#include <support/tiled_tunings.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#ifndef LLMK_TEST_SPACE
#error "compile with -DLLMK_TEST_SPACE=<a Kokkos execution space: Serial, OpenMP, Cuda>"
#endif

namespace {

using Space = Kokkos::LLMK_TEST_SPACE;
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

template <class T>
Mat<T> random_matrix(const char* label, index_t rows, index_t cols, std::mt19937& rng,
                     std::vector<double>& values) {
  Mat<T> m(std::string(label), rows, cols);
  auto h = Kokkos::create_mirror_view(m);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  values.resize(rows * cols);
  for (index_t i = 0; i < rows * cols; ++i) {
    h.data()[i] = T(dist(rng));
    values[i] = double(float(h.data()[i]));
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
  if (overwrite) Kokkos::deep_copy(D, TD(std::nanf("")));  // never read

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
  // Float sums of K products: well within K·2⁻²³·Σ|terms| (plus one bf16
  // rounding of the result).
  const double out_eps = std::is_same_v<TD, bf16> ? 1.0 / 256 : 0.0;
  int bad = 0;
  for (index_t r = 0; r < s.R; ++r) {
    double bias = 0, bias_abs = 0;
    for (index_t c = 0; c < s.N; ++c) {
      double sum = 0, abs = 0;
      for (index_t k = 0; k < s.K; ++k) {
        const double ak = TransA ? a[k * s.R + r] : a[r * s.K + k];
        sum += ak * b[k * s.N + c];
        abs += std::abs(ak * b[k * s.N + c]);
        if (c == 0) bias += ak, bias_abs += std::abs(ak);
      }
      double factor = 1;
      if (!TransA) factor = llmk::reference::gelu_grad(p[r * s.N + c]);
      const double want = sum * factor + (overwrite ? 0.0 : d0[r * s.N + c]);
      const double got = float(h(r, c));
      // (+ 2e-6·|sum|: the kernel's gelu' is float, its tanhf the device's
      // on a GPU, and gelu' near its zero has no relative accuracy: the
      // factor is good to ~1e-6.)
      const double tol = (s.K * 0x1p-23 * abs + 1e-6) * std::abs(factor) * 1.01 +
                         (TransA ? 0.0 : 2e-6 * std::abs(sum)) +
                         (out_eps + 0x1p-22) * std::abs(want);
      if (!(std::abs(got - want) <= tol) && ++bad <= 5)
        ADD_FAILURE() << "D(" << r << ", " << c << ") = " << got << ", want " << want;
    }
    if (TransA) {
      const double want = 0.5 + bias, got = hb(r);
      if (!(std::abs(got - want) <= s.K * 0x1p-23 * bias_abs + 1e-6) && ++bad <= 5)
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
// not (odd row lengths fall back to element loads).
std::vector<Shape> shapes() {
  if (kCuda) return {{256, 128, 512}, {300, 260, 100}, {130, 131, 1000}, {1, 3, 5}};
  return {{16, 16, 64}, {13, 21, 37}, {24, 8, 3}, {1, 3, 5}, {40, 17, 200}};
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
