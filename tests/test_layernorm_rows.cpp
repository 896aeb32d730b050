// ops/layernorm_backward/rows.hpp's kernel (the GPU's: rows in registers, S warps
// a row, the groups' column sums added in team scratch) against the float64
// reference, on every space of the build. On a host space it runs through
// small host tunings of that kernel (one lane, packs of 16 or 8 bytes, a few packs
// a lane; teams of two threads on OpenMP, so that a row spans two "warps"
// and a team takes two rows at once), so CI, which has no GPU, covers its
// indexing, its barriers and its partial rows; on Cuda through the shipped
// tuning and one whose lanes hold a single pack, which makes rows of 256 to
// 2048 elements span 2, 4 and 8 warps. Each case asserts the warps per row
// it expects, so a plan that silently falls back cannot pass for the kernel.
// Then Cuda's "warp_rows" kernel (backends/cuda/layernorm_warp_rows.cpp),
// each case asserting that it ran rather than fell back.
#include "support/test_space.hpp"

#include <gtest/gtest.h>
#include <ops/layernorm_backward/rows.hpp>
#include <ops/layernorm_backward/reference/compare.hpp>
#include <ops/layernorm_backward/reference/reference.hpp>
#include <ops/layernorm_backward/warp_rows.hpp>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Space = llmk_test::TestSpace;
using llmk::bf16;
using llmk::index_t;
namespace ref = llmk::reference;
namespace lref = llmk::reference::layernorm;

#ifdef KOKKOS_ENABLE_CUDA
constexpr bool kCuda = std::is_same_v<Space, Kokkos::Cuda>;
#else
constexpr bool kCuda = false;
#endif

// The kernel on a host: teams of TeamSize threads of one lane, at most
// Chunks packs a lane, 5 rows a block (blocks and row steps that end
// partway).
template <int TeamSize, int Chunks, int PackBytes = 16, int RowsPerStep = 1>
struct HostRows : llmk::kernels::LayernormTuning<Space> {
  template <class T>
  static constexpr int rows_per_step = RowsPerStep;
  static constexpr int team_size = TeamSize, vector_length = 1;
  static constexpr bool rows_in_registers = true;
  template <class T>
  static constexpr int row_chunks = Chunks;
  template <class T>
  static constexpr int rows_pack_bytes = PackBytes;
  static constexpr int rows_block = 5;
  // The partials' second pass on as many threads (a tree of two sums).
  static constexpr int reduce_threads = TeamSize;
};

// The shipped tuning with at most Chunks packs a lane (0: as shipped).
template <int Chunks>
struct CudaRows : llmk::kernels::LayernormTuning<Space> {
  using Base = llmk::kernels::LayernormTuning<Space>;
  template <class T>
  static constexpr int row_chunks = Chunks > 0 ? Chunks : Base::template row_chunks<T>;
};

struct Case {
  index_t B, T, C;
  int warps_per_row;  // what the plan must choose
  bool bias = true;
};

template <class T>
using Mat = llmk::Matrix<Space, T>;
template <class T>
using Vec = llmk::Vector<Space, T>;

template <class T>
Mat<T> device_matrix(const char* label, const std::vector<float>& v, index_t rows, index_t cols) {
  Mat<T> m(std::string(label), rows, cols);
  auto h = Kokkos::create_mirror_view(m);
  for (std::size_t i = 0; i < v.size(); ++i) h.data()[i] = T(v[i]);
  Kokkos::deep_copy(m, h);
  return m;
}
template <class T>
Vec<T> device_vector(const char* label, const std::vector<float>& v) {
  Vec<T> x(std::string(label), v.size());
  auto h = Kokkos::create_mirror_view(x);
  for (std::size_t i = 0; i < v.size(); ++i) h.data()[i] = T(v[i]);
  Kokkos::deep_copy(x, h);
  return x;
}
template <class V>
std::vector<float> host_values(const V& view) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), view);
  std::vector<float> out(h.span());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = llmk::to_float(h.data()[i]);
  return out;
}

ref::Precision precision_of(bool bf16_in, bool float_grads) {
  return !bf16_in ? ref::Precision::fp32
                  : float_grads ? ref::Precision::bf16_fp32grad : ref::Precision::bf16;
}

// One call of a kernel (run_kernel(args): it runs on them) on a random
// problem, every output against the float64 reference; then again on the
// same inputs, bitwise equal (no atomics: the order is the kernel's plan).
template <class TIn, class TGrad, class RunKernel>
void check_case(const Case& k, const bool overwrite, const RunKernel& run_kernel) {
  const ref::Precision precision =
      precision_of(std::is_same_v<TIn, bf16>, std::is_same_v<TGrad, float>);
  const lref::Shape shape{"rows", k.B, k.T, k.C, k.bias};
  SCOPED_TRACE(std::string(ref::precision_name(precision)) + " B=" + std::to_string(k.B) +
               " T=" + std::to_string(k.T) + " C=" + std::to_string(k.C) +
               (overwrite ? " =" : " +=") + (k.bias ? "" : " no bias"));
  const index_t M = k.B * k.T;
  const lref::HostProblem p = lref::make_problem(shape, unsigned(M * 31 + k.C), precision);
  const lref::Updates updates{overwrite, overwrite, overwrite};
  const lref::Gradients64 expected = lref::reference_backward(p, updates);

  using Args = llmk::kernels::LayernormArgs<Space, TIn, TIn, TGrad, TGrad>;
  const float nan = std::nanf("");
  auto run = [&] {
    Args a;
    // Overwritten outputs start as NaN: never read.
    a.dinp = device_matrix<TIn>("dinp", overwrite ? std::vector<float>(p.dinp.size(), nan) : p.dinp,
                                M, k.C);
    a.dweight = device_vector<TGrad>(
        "dweight", overwrite ? std::vector<float>(p.dweight.size(), nan) : p.dweight);
    a.dbias = device_vector<TGrad>("dbias",
                                   overwrite ? std::vector<float>(p.dbias.size(), nan) : p.dbias);
    a.dout = device_matrix<TIn>("dout", p.dout, M, k.C);
    a.inp = device_matrix<TIn>("inp", p.inp, M, k.C);
    a.weight = device_vector<TIn>("weight", p.weight);
    a.mean = device_vector<float>("mean", p.mean);
    a.rstd = device_vector<float>("rstd", p.rstd);
    a.overwrite_dinp = a.overwrite_dweight = a.overwrite_dbias = overwrite;
    run_kernel(a);
    Space().fence();
    return std::vector<std::vector<float>>{host_values(a.dinp), host_values(a.dweight),
                                           host_values(a.dbias)};
  };
  const auto got = run();
  const std::vector<double>* refs[] = {&expected.dinp, &expected.dweight, &expected.dbias};
  const ref::Output outputs[] = {ref::Output::dinp, ref::Output::dweight, ref::Output::dbias};
  const char* names[] = {"dinp", "dweight", "dbias"};
  for (int o = 0; o < (k.bias ? 3 : 2); ++o) {
    const ref::Comparison c = ref::compare(names[o], got[o], *refs[o], o == 0 ? k.C : 0,
                                           lref::tolerance(precision, outputs[o]));
    EXPECT_TRUE(c.ok) << c.message;
  }
  const auto again = run();
  for (int o = 0; o < 3; ++o)
    EXPECT_EQ(ref::first_bitwise_difference(got[o].data(), again[o].data(), got[o].size()), -1)
        << names[o] << " differs between two runs";
}

// The rows kernel with Tuning, whose plan must take the case's warps a row.
template <class TIn, class TGrad, class Tuning>
void check_rows(const Case& k, const bool overwrite) {
  check_case<TIn, TGrad>(k, overwrite, [&](const auto& a) {
    const index_t M = k.B * k.T;
    const auto plan = llmk::kernels::layernorm_rows_plan<TIn, Tuning>(M, k.C);
    ASSERT_EQ(plan.warps_per_row, k.warps_per_row) << "the plan's warps per row";
    EXPECT_TRUE(llmk::kernels::layernorm_rows_fit<Tuning>(a));
    Kokkos::View<float*, Space> partials(
        "partials",
        llmk::kernels::layernorm_rows_workspace<Space, TIn, Tuning>(M, k.C, k.bias));
    llmk::kernels::run_layernorm_rows<Space, Tuning>(Space(), a, plan, partials.data());
  });
}

template <class Tuning>
void check_all(const std::vector<Case>& cases, const std::vector<Case>& bf16_cases) {
  for (const Case& k : cases)
    for (bool overwrite : {false, true}) check_rows<float, float, Tuning>(k, overwrite);
  for (const Case& k : bf16_cases)
    for (bool overwrite : {false, true}) {
      check_rows<bf16, bf16, Tuning>(k, overwrite);
      check_rows<bf16, float, Tuning>(k, overwrite);
    }
}

TEST(LayernormRows, HostOneThreadTeams) {
  if constexpr (kCuda) GTEST_SKIP() << "host tunings";
  // One lane, at most 3 packs of 4 floats or 8 bf16: rows of ≤ 12 floats,
  // ≤ 24 bf16, on one thread; the last pack of a lane partly past C never
  // happens (packs are whole), packs past C do (C = 8: 2 of 3).
  check_all<HostRows<1, 3>>({{3, 7, 8, 1}, {2, 9, 12, 1}, {1, 1, 4, 1}, {2, 6, 12, 1, false}},
                            {{3, 7, 16, 1}, {2, 9, 24, 1}, {1, 3, 8, 1, false}});
  // 8-byte packs: 2 floats or 4 bf16.
  check_all<HostRows<1, 3, 8>>({{3, 7, 4, 1}, {2, 9, 6, 1}}, {{3, 7, 8, 1}, {2, 9, 12, 1}});
  // 2 and 3 rows at a time (blocks of 5 rows: the last step partly empty).
  check_all<HostRows<1, 3, 16, 2>>({{3, 7, 8, 1}, {1, 4, 12, 1, false}}, {{3, 7, 16, 1}});
  check_all<HostRows<1, 2, 16, 3>>({{3, 7, 8, 1}}, {{2, 9, 16, 1}});
}

TEST(LayernormRows, HostTwoThreadTeams) {
  if constexpr (kCuda) GTEST_SKIP() << "host tunings";
  if (Space().concurrency() < 2) GTEST_SKIP() << "teams of two threads need two";
  // Teams of 2 threads: rows of ≤ 12 floats on one thread, two rows at once
  // (the groups' column sums added in scratch); wider rows on both threads
  // (the row sums through scratch, a barrier a row).
  using Tuning = HostRows<2, 3>;
  check_all<Tuning>({{3, 7, 12, 1}, {3, 7, 20, 2}, {2, 5, 24, 2, false}},
                    {{3, 7, 24, 1}, {2, 9, 40, 2}});
  // Two rows at a time on each group (S = 1) or on both threads (S = 2).
  check_all<HostRows<2, 3, 16, 2>>({{3, 7, 12, 1}, {3, 7, 20, 2}}, {{2, 9, 40, 2}});
}

TEST(LayernormRows, CudaShipped) {
  if constexpr (!kCuda) GTEST_SKIP() << "the shipped tuning is Cuda's";
  // fp32: 16-byte packs, ≤ 2 a lane, 2 rows at once: a warp holds ≤ 256
  // columns (C = 768 and 520 take 4 warps, 1600 takes 8); bf16: 8-byte packs,
  // ≤ 4 a lane: ≤ 512 columns a warp (768 and 520 on 2, 1600 on 4). M = 205:
  // blocks of 32 rows, the last of 13; C = 520 leaves lanes of the last pack
  // idle.
  using Tuning = CudaRows<0>;
  check_all<Tuning>({{5, 41, 768, 4}, {5, 41, 520, 4}, {2, 37, 1600, 8}, {3, 5, 768, 4, false}},
                    {{5, 41, 768, 2}, {5, 41, 520, 2}, {2, 37, 1600, 4}});
}

TEST(LayernormRows, CudaWarpsPerRow) {
  if constexpr (!kCuda) GTEST_SKIP() << "the Cuda tuning";
  // One pack a lane: a warp holds 128 floats or 128 bf16, so wider rows span
  // 2, 4 and 8 warps (all of a team's).
  using Tuning = CudaRows<1>;
  check_all<Tuning>({{2, 19, 256, 2}, {2, 19, 512, 4}, {2, 19, 1024, 8}, {2, 19, 1000, 8}},
                    {{2, 19, 256, 2}, {2, 19, 512, 4}, {2, 19, 1024, 8}});
}

}  // namespace

// --- "warp_rows" (backends/cuda/layernorm_warp_rows.cpp) ----------------------

// warp_rows_run on Cuda; false elsewhere (it is Cuda's alone).
template <class S, class Args>
bool warp_rows(const Args& a, float* partials) {
#if LLMK_HAVE_CUDA && defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<S, Kokkos::Cuda>)
    return llmk::op::layernorm_backward::warp_rows_run(S(), a, partials);
#endif
  return false;
}

// The kernel itself (it must not fall back: warp_rows_run says whether it ran).
template <class TIn, class TGrad>
void check_warp_rows(const Case& k, const bool overwrite) {
  check_case<TIn, TGrad>(k, overwrite, [&](const auto& a) {
    const llmk::op::layernorm_backward::Sizes sizes{k.B * k.T, k.C, k.bias};
    Kokkos::View<float*, Space> partials(
        "partials", llmk::op::layernorm_backward::warp_rows_workspace(sizes));
    EXPECT_TRUE(warp_rows<Space>(a, partials.data())) << "warp_rows fell back";
  });
}

TEST(LayernormWarpRows, Cuda) {
  if constexpr (!kCuda) GTEST_SKIP() << "warp_rows is Cuda's";
  // 16-byte chunks (4 floats, 8 bf16), lane l's chunks l + 32·i: fp32 C = 768
  // is 6 a lane, 520 is 5 (the last partly past the row on some lanes), 1024
  // is 8 (the most); bf16 768 is 3, 1600 is 7, 2048 is 8 (two stages fit).
  // M = 205: the grid's warps (8 a block, a block an SM) take a row or none;
  // M = 3: one block whose warps mostly have none; M = 6000 and 8192: 5-8
  // rows a warp, so every stage is refilled (4 stages, or 2-3 for wide fp32).
  const std::vector<Case> fp32 = {{5, 41, 768, 0}, {5, 41, 520, 0}, {2, 37, 1024, 0},
                                  {3, 5, 768, 0, false}, {1, 3, 4, 0}, {4, 1500, 64, 0},
                                  {8, 1024, 768, 0}};
  const std::vector<Case> bf16s = {{5, 41, 768, 0}, {5, 41, 520, 0}, {2, 37, 1600, 0},
                                   {2, 19, 2048, 0}, {1, 3, 8, 0, false}, {4, 1500, 64, 0},
                                   {8, 1024, 768, 0}};
  for (const Case& k : fp32)
    for (bool overwrite : {false, true}) check_warp_rows<float, float>(k, overwrite);
  for (const Case& k : bf16s)
    for (bool overwrite : {false, true}) {
      check_warp_rows<bf16, bf16>(k, overwrite);
      check_warp_rows<bf16, float>(k, overwrite);
    }
}

TEST(LayernormWarpRows, FallsBackWhereItCannot) {
  if constexpr (!kCuda) GTEST_SKIP() << "warp_rows is Cuda's";
  // C not a whole number of 16-byte chunks, more than 8 chunks a lane, a
  // row array off a 16-byte boundary: false, nothing launched ("blocked"'s
  // kernels run those calls; the contract tests check their results).
  const auto refuses = [](const index_t M, const index_t C, const index_t shift) {
    using Args = llmk::kernels::LayernormArgs<Space, float, float, float, float>;
    Args a;
    Mat<float> storage("storage", M + 1, C);
    a.dinp = Mat<float>("dinp", M, C);
    a.dout = Mat<float>(storage.data() + shift, M, C);
    a.inp = Mat<float>("inp", M, C);
    a.weight = Vec<float>("weight", C);
    a.dweight = Vec<float>("dweight", C);
    a.mean = Vec<float>("mean", M);
    a.rstd = Vec<float>("rstd", M);
    Kokkos::View<float*, Space> partials("partials", 1024 * 2 * C);
    return !warp_rows<Space>(a, partials.data());
  };
  EXPECT_TRUE(refuses(16, 6, 0));     // 1.5 chunks a row
  EXPECT_TRUE(refuses(16, 1028, 0));  // 257 chunks: 9 a lane
  EXPECT_TRUE(refuses(16, 64, 1));    // dout 4 bytes past a boundary
  EXPECT_FALSE(refuses(16, 64, 0));   // and the same call aligned runs
}
