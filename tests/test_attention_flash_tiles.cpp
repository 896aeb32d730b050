// The recompute backward's kernels (kernels/attention_flash.hpp) run
// directly with tunings other than the space's, so that every space's CI
// covers what only another space's tuning would reach: on a host, the GPU's
// loops (micro-tiles of pairs and of accumulator elements, channels_inner =
// false; 2 × 2, and 3 × 2 that divide nothing), blocks that do not divide T
// or each other, the Cuda tuning's blocks, a scratch budget that halves the
// blocks, one that sends the tiles to scratch level 1; on Cuda, the same
// with its team of 128 threads. Each against reference_backward_recompute
// within recompute_tolerance, dqkv poisoned and overwritten (and once
// accumulated), and once with NaN inputs (NaN exactly where the reference's). Named "attention_flash/Tiles.<tuning>_<shape>".
// The forward's kernel (ops/attention_forward/flash.hpp: the same tiles)
// likewise, out and lse against reference_forward within the forward's
// tolerances: "attention_flash/ForwardTiles.<tuning>_<shape>".
#include "contract/device_problem.hpp"
#include "support/compare.hpp"
#include "support/test_space.hpp"

#include <kernels/attention_flash.hpp>
#include <ops/attention_backward/reference/compare.hpp>
#include <ops/attention_backward/reference/problem.hpp>
#include <ops/attention_backward/reference/reference.hpp>
#include <ops/attention_forward/flash.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <limits>
#include <string>
#include <vector>

namespace {

using Space = llmk_test::TestSpace;
namespace at = llmk::reference::attention;
using llmk::reference::Precision;

// Host spaces' teams have one thread; Cuda's the shipped 128.
constexpr int kTeam = llmk_test::is_host_space<Space> ? 1 : 128;

template <int Owned, int Streamed, bool ChannelsInner, std::size_t Budget = std::size_t(1) << 20,
          int Micro = 2, int MicroCols = 2>
struct TestTuning {
  static constexpr int team_size = kTeam;
  static constexpr int dkdv_keys = Owned, dkdv_queries = Streamed;
  static constexpr int dq_queries = Owned, dq_keys = Streamed;
  static constexpr int scratch_level = 0;
  static constexpr std::size_t scratch_bytes = Budget;
  static constexpr bool channels_inner = ChannelsInner;
  static constexpr int score_rows = Micro, score_cols = MicroCols;
  static constexpr int acc_rows = MicroCols, acc_cols = Micro;
};

template <class E>
using Vector = Kokkos::View<E*, typename Space::device_type>;

template <class E>
Vector<E> upload(const std::vector<float>& v, const char* name) {
  Vector<E> d(std::string(name), v.size());
  const auto h = Kokkos::create_mirror_view(d);
  for (std::size_t i = 0; i < v.size(); ++i) h(i) = llmk::from_float<E>(v[i]);
  Kokkos::deep_copy(d, h);
  return d;
}

// NaN in q, dout and out of the middle position of sequence 0, head 0, and
// in k and v of the next: the
// results NaN exactly where the causal reference's are (the masked pairs'
// zeros must not be summed: 0 · NaN).
void plant_nan(at::HostProblem& p) {
  const at::Shape& s = p.shape;
  const std::size_t t = std::size_t(s.T / 2);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  p.qkv[t * std::size_t(3 * s.C)] = nan;
  p.dout[t * std::size_t(s.C) + 1 % std::size_t(s.HS())] = nan;
  p.out[t * std::size_t(s.C)] = nan;
  if (t + 1 < std::size_t(s.T)) {  // k and v of the next position
    p.qkv[(t + 1) * std::size_t(3 * s.C) + std::size_t(s.C)] = nan;
    p.qkv[(t + 1) * std::size_t(3 * s.C) + std::size_t(2 * s.C) + 1] = nan;
  }
}

template <class Tuning, class E>
void check(const at::Shape& shape, Precision precision, bool overwrite, bool nan = false) {
  at::HostProblem p = at::make_problem(shape, 77, precision);
  if (nan) plant_nan(p);
  if (overwrite) llmk_test::contract::poison(p.dqkv);
  const Vector<E> dqkv = upload<E>(p.dqkv, "dqkv"), dout = upload<E>(p.dout, "dout"),
                  qkv = upload<E>(p.qkv, "qkv"), out = upload<E>(p.out, "out");
  const Vector<float> lse = upload<float>(p.lse, "lse"), D("D", p.lse.size());
  llmk::kernels::FlashAttentionArgs<E, E> a;
  a.dqkv = dqkv.data(), a.dout = dout.data(), a.qkv = qkv.data(), a.out = out.data();
  a.lse = lse.data();
  a.B = shape.B, a.T = shape.T, a.C = shape.C, a.NH = shape.NH;
  a.alpha = float(1.0 / std::sqrt(double(shape.HS())));
  a.overwrite = overwrite;
  const Space exec;
  llmk::kernels::attention_flash_row_dots(exec, a, D.data());
  llmk::kernels::attention_flash_backward<Space, E, E, Tuning>(exec, a, D.data());
  exec.fence();
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dqkv);
  std::vector<float> r(h.size());
  for (std::size_t i = 0; i < r.size(); ++i) r[i] = llmk::to_float(h(i));
  EXPECT_TRUE(llmk_test::matches_reference(
      "dqkv", r, at::reference_backward_recompute(p, overwrite), 3 * shape.C,
      at::recompute_tolerance(precision)));
}

// The forward's kernel with this tuning: out (poisoned and overwritten, or
// accumulated) and lse against the float64 forward.
template <class Tuning, class E>
void check_forward(const at::Shape& shape, Precision precision, bool overwrite, bool nan = false) {
  at::HostProblem p = at::make_problem(shape, 78, precision);
  if (nan) plant_nan(p);
  const std::vector<std::vector<double>> ref = at::reference_forward(p, overwrite);
  if (overwrite) llmk_test::contract::poison(p.out);
  llmk_test::contract::poison(p.lse);
  const Vector<E> out = upload<E>(p.out, "out"), qkv = upload<E>(p.qkv, "qkv");
  const Vector<float> lse = upload<float>(p.lse, "lse");
  llmk::op::attention_forward::Args<E, E> a;
  a.out = out.data(), a.lse = lse.data(), a.qkv = qkv.data();
  a.B = shape.B, a.T = shape.T, a.C = shape.C, a.NH = shape.NH;
  a.alpha = float(1.0 / std::sqrt(double(shape.HS())));
  a.overwrite = overwrite;
  const Space exec;
  llmk::op::attention_forward::FlashForward<Space, E, E, Tuning>(a).run(exec);
  exec.fence();
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
  const auto hl = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), lse);
  std::vector<float> r(h.size()), rl(hl.data(), hl.data() + hl.size());
  for (std::size_t i = 0; i < r.size(); ++i) r[i] = llmk::to_float(h(i));
  EXPECT_TRUE(llmk_test::matches_reference("out", r, ref[0], shape.C, at::tolerance(precision)));
  EXPECT_TRUE(llmk_test::matches_reference("lse", rl, ref[1], shape.T, at::tolerance(Precision::fp32)));
}

const std::vector<at::Shape>& shapes() {
  static const std::vector<at::Shape> v = {
      {"HS13", 1, 37, 39, 3}, {"T130", 1, 130, 24, 2}, {"gpt2_heads", 2, 16, 768, 12},
      {"B2", 2, 70, 16, 2}};
  return v;
}

template <class Tuning>
void add(const std::string& tuning) {
  for (const at::Shape& s : shapes()) {
    llmk_test::contract::add_test("attention_flash", "Tiles", tuning + "_" + s.name,
                                  "tuning " + tuning + ", shape " + s.name, [s] {
                                    check<Tuning, float>(s, Precision::fp32, true);
                                    check<Tuning, float>(s, Precision::fp32, false);
                                    check<Tuning, llmk::bf16>(s, Precision::bf16, true);
                                    check<Tuning, float>(s, Precision::fp32, true, true);
                                  });
    llmk_test::contract::add_test("attention_flash", "ForwardTiles", tuning + "_" + s.name,
                                  "tuning " + tuning + ", shape " + s.name, [s] {
                                    check_forward<Tuning, float>(s, Precision::fp32, true);
                                    check_forward<Tuning, float>(s, Precision::fp32, false);
                                    check_forward<Tuning, llmk::bf16>(s, Precision::bf16, true);
                                    check_forward<Tuning, float>(s, Precision::fp32, true, true);
                                  });
  }
}

[[maybe_unused]] const bool registered = [] {
  add<TestTuning<32, 16, false>>("gpu_loops");
  add<TestTuning<5, 3, true>>("odd_blocks");
  // Micro-tiles of 3 × 2 (and 2 × 3) that divide neither the blocks nor HS.
  add<TestTuning<7, 5, false, std::size_t(1) << 20, 3, 2>>("odd_blocks_gpu_loops");
  add<TestTuning<16, 32, false>>("cuda_blocks");
  // 8 KiB: the 64-row blocks halve (streamed first) until they fit.
  add<TestTuning<64, 64, true, 8 * 1024>>("halved");
  // 64 bytes: not even one row each: level 1 scratch.
  add<TestTuning<4, 4, false, 64>>("level1");
  return true;
}();

}  // namespace
