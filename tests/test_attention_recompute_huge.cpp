// attention_backward_recompute at a length whose T × T matrices no
// materialized backward could hold: B = 8, T = 16384, C = 768, NH = 12
// (att would be 8·12·16384² floats, 103 GB). Named HugeRows (label `huge`,
// run alone); Cuda only: on a CPU the call alone is hours (skipped, saying
// so).
//   HugeRows.flash_<precision>_T16384, HugeRows.flash_mma_<precision>_T16384 (Cuda)
//     random q (×4), k, v, dout; the forward's out and lse computed on the
//     device (support/attention_forward.hpp, float); dqkv poisoned with NaN
//     and overwritten; every element of dqkv finite; then a float64 check
//     of sampled rows: for 3 heads and 8 positions each (the first and
//     last, both sides of block boundaries), dq, dk and dv of the row
//     computed in double on the host from the very inputs the call got
//     (bf16 ones as stored, out and lse as the device made them), relative
//     L2 over them all within recompute_tolerance. Prints the call's time
//     and GFLOP/s (the causal half's 4·B·C·T·(T+1)).
#include "contract/device_problem.hpp"
#include "support/attention_forward.hpp"
#include "support/compare.hpp"
#include "support/test_space.hpp"

#include <core/reference/bf16.hpp>
#include <core/reference/random.hpp>
#include <llmk/attention_backward.hpp>
#include <ops/attention_backward/reference/compare.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

namespace {

using Space = llmk_test::TestSpace;
using llmk::reference::Precision;
using i64 = std::int64_t;

constexpr i64 kB = 8, kT = 16384, kC = 768, kNH = 12, kHS = kC / kNH;

template <class E>
using Matrix = Kokkos::View<E**, Kokkos::LayoutRight, typename Space::device_type>;
using Lse = Kokkos::View<float***, Kokkos::LayoutRight, typename Space::device_type>;

// Host values as E (bf16: rounded) and back as float: what the device holds.
template <class E>
std::vector<E> stored(std::vector<float>& v) {
  std::vector<E> e(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    e[i] = llmk::from_float<E>(v[i]);
    v[i] = llmk::to_float(e[i]);
  }
  return e;
}

template <class E>
Matrix<E> upload(const std::vector<E>& v, i64 rows, i64 cols, const char* name) {
  Matrix<E> d(std::string(name), rows, cols);
  Kokkos::View<const E**, Kokkos::LayoutRight, Kokkos::HostSpace,
               Kokkos::MemoryTraits<Kokkos::Unmanaged>>
      h(v.data(), rows, cols);
  Kokkos::deep_copy(d, h);
  return d;
}

template <class V>
std::vector<float> download(const V& d) {
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), d);
  std::vector<float> v(h.size());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = llmk::to_float(h.data()[i]);
  return v;
}

// The inputs as the call sees them, on the host.
struct Host {
  std::vector<float> qkv, dout, out, lse;
  float q(i64 b, i64 t, i64 h, i64 d, i64 part = 0) const {
    return qkv[std::size_t((b * kT + t) * 3 * kC + part * kC + h * kHS + d)];
  }
};

// dq, dk, dv (3·HS values) of position t of head h in sequence b, in double.
std::vector<double> reference_row(const Host& x, i64 b, i64 h, i64 t) {
  const double alpha = 1.0 / std::sqrt(double(kHS));
  const auto at = [&](i64 u) { return std::size_t((b * kT + u) * kC + h * kHS); };
  const auto dot = [&](i64 t1, i64 p1, i64 u, i64 p2) {
    double s = 0.0;
    for (i64 d = 0; d < kHS; ++d) s += double(x.q(b, t1, h, d, p1)) * double(x.q(b, u, h, d, p2));
    return s;
  };
  const auto dp = [&](i64 t1, i64 u) {  // dout_h[t1] · v[u]
    double s = 0.0;
    for (i64 d = 0; d < kHS; ++d) s += double(x.dout[at(t1) + d]) * double(x.q(b, u, h, d, 2));
    return s;
  };
  const auto D = [&](i64 t1) {
    double s = 0.0;
    for (i64 d = 0; d < kHS; ++d) s += double(x.dout[at(t1) + d]) * double(x.out[at(t1) + d]);
    return s;
  };
  const auto P = [&](i64 t1, i64 u) {
    return std::exp(alpha * dot(t1, 0, u, 1) - double(x.lse[std::size_t((b * kNH + h) * kT + t1)]));
  };
  std::vector<double> r(std::size_t(3 * kHS), 0.0);
  const double Dt = D(t);
  for (i64 u = 0; u <= t; ++u) {  // dq[t]
    const double ds = P(t, u) * (dp(t, u) - Dt);
    for (i64 d = 0; d < kHS; ++d) r[std::size_t(d)] += alpha * ds * double(x.q(b, u, h, d, 1));
  }
  for (i64 u = t; u < kT; ++u) {  // dk[t], dv[t]: the queries u ≥ t
    const double p = P(u, t), ds = p * (dp(u, t) - D(u));
    for (i64 d = 0; d < kHS; ++d) {
      r[std::size_t(kHS + d)] += alpha * ds * double(x.q(b, u, h, d, 0));
      r[std::size_t(2 * kHS + d)] += p * double(x.dout[at(u) + d]);
    }
  }
  return r;
}

template <class E>
void check_huge(Precision precision, const std::string& impl) {
  if constexpr (llmk_test::is_host_space<Space>) {
    GTEST_SKIP() << "B 8, T 16384 on a CPU: hours for the call alone; Cuda only";
  } else {
    const auto since = [](std::chrono::steady_clock::time_point t0) {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    const i64 M = kB * kT;
    Host x;
    x.qkv.resize(std::size_t(M * 3 * kC));
    x.dout.resize(std::size_t(M * kC));
    llmk::reference::fill_random(x.qkv, 901);
    llmk::reference::fill_random(x.dout, 902);
    for (i64 r = 0; r < M; ++r)
      for (i64 c = 0; c < kC; ++c) x.qkv[std::size_t(r * 3 * kC + c)] *= 4.0f;  // q
    const Matrix<E> qkv = upload(stored<E>(x.qkv), M, 3 * kC, "qkv");
    const Matrix<E> dout = upload(stored<E>(x.dout), M, kC, "dout");
    const Matrix<E> out("out", M, kC), dqkv("dqkv", M, 3 * kC);
    const Lse lse("lse", kB, kNH, kT);
    const Space exec;
    llmk::AttentionBackwardOptions options;
    options.impl = impl;
    options.dqkv_update = llmk::Update::overwrite;  // dqkv starts as NaN
    if (!llmk::available<llmk::AttentionBackwardRecompute, Space>(impl))
      GTEST_SKIP() << impl << " is not available on " << Space::name();
    auto t0 = std::chrono::steady_clock::now();
    llmk_test::attention_forward(exec, qkv.data(), out.data(), lse.data(), kB, kT, kC, kNH);
    Kokkos::deep_copy(exec, dqkv, llmk::from_float<E>(std::numeric_limits<float>::quiet_NaN()));
    exec.fence();
    std::printf("forward on the device: %.2f s\n", since(t0));
    t0 = std::chrono::steady_clock::now();
    llmk::attention_backward_recompute(exec, dqkv, dout, qkv, out, lse, options);
    exec.fence();
    const double s = since(t0), flops = 4.0 * kB * kC * double(kT) * double(kT + 1);
    std::printf("attention_backward_recompute %s (%s, first call): %.3f s, %.1f GFLOP/s\n",
                llmk::reference::precision_name(precision), impl.c_str(), s, flops / s * 1e-9);
    t0 = std::chrono::steady_clock::now();
    llmk::attention_backward_recompute(exec, dqkv, dout, qkv, out, lse, options);
    exec.fence();
    const double s2 = since(t0);
    std::printf("second call: %.3f s, %.1f GFLOP/s\n", s2, flops / s2 * 1e-9);
    const std::vector<float> g = download(dqkv);
    x.out = download(out);
    x.lse = download(lse);
    std::size_t nonfinite = 0;
    for (const float v : g) nonfinite += std::isfinite(v) ? 0 : 1;
    EXPECT_EQ(nonfinite, 0u) << "elements of dqkv not finite (it started as NaN)";
    for (const float v : x.lse) ASSERT_TRUE(std::isfinite(v)) << "the forward's lse";
    // Sampled rows: 3 heads, 8 positions each.
    std::vector<float> got;
    std::vector<double> expected;
    t0 = std::chrono::steady_clock::now();
    for (const auto& [b, h] : {std::pair<i64, i64>{0, 0}, {3, 7}, {7, 11}})
      for (const i64 t : {i64(0), i64(1), i64(31), i64(32), i64(1000), i64(8191), i64(8192),
                          kT - 1}) {
        const std::vector<double> r = reference_row(x, b, h, t);
        for (i64 part = 0; part < 3; ++part)
          for (i64 d = 0; d < kHS; ++d) {
            got.push_back(g[std::size_t((b * kT + t) * 3 * kC + part * kC + h * kHS + d)]);
            expected.push_back(r[std::size_t(part * kHS + d)]);
          }
      }
    std::printf("float64 of %zu sampled elements: %.2f s\n", got.size(), since(t0));
    EXPECT_TRUE(llmk_test::matches_reference(
        "dqkv (sampled rows)", got, expected, 3 * kHS,
        llmk::reference::attention::recompute_tolerance(precision)));
  }
}

[[maybe_unused]] const bool registered = [] {
  llmk_test::contract::add_test("attention_backward_recompute", "HugeRows", "flash_fp32_T16384",
                      "B 8, T 16384, C 768, NH 12, fp32", [] { check_huge<float>(Precision::fp32, "flash"); });
  llmk_test::contract::add_test("attention_backward_recompute", "HugeRows", "flash_bf16_T16384",
                      "B 8, T 16384, C 768, NH 12, bf16",
                      [] { check_huge<llmk::bf16>(Precision::bf16, "flash"); });
  llmk_test::contract::add_test("attention_backward_recompute", "HugeRows", "flash_mma_bf16_T16384",
                      "B 8, T 16384, C 768, NH 12, bf16, tensor cores",
                      [] { check_huge<llmk::bf16>(Precision::bf16, "flash_mma"); });
  llmk_test::contract::add_test("attention_backward_recompute", "HugeRows", "flash_mma_fp32_T16384",
                      "B 8, T 16384, C 768, NH 12, fp32, tensor cores (3xTF32)",
                      [] { check_huge<float>(Precision::fp32, "flash_mma"); });
  return true;
}();

}  // namespace
