// llmk::matmul_backward's own cases in the per-space binary
// (LLMK_TEST_SPACE), beside the contract tests every operation passes
// (tests/contract/, registered by the generated space_matmul_backward.cpp
// with support/matmul_backward_adapter.hpp: every precision, tf32 included,
// and GELU off and on; names "matmul_backward/<aspect>.<case>",
// tests/README.md lists the aspects): what the infos say that is matmul's
// own. (Bad arguments on the host: test_matmul_bad_inputs.cpp, in the
// validation binary; M ≥ 2³¹: test_matmul_huge.cpp.)
#include "contract/all.hpp"
#include "support/matmul_backward_adapter.hpp"
#include "support/matmul_forward_adapter.hpp"
#include "support/test_space.hpp"

#include <gtest/gtest.h>
#include <llmk/matmul_backward.hpp>

#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

namespace {

using Space = llmk_test::TestSpace;
using llmk_test::Precision;

// matmul's own: the configurations are fp32, bf16 and bf16-fp32grad; every
// implementation runs fp32 and says how it computes dbias and GELU's
// backward; naive and the portable kernels are there on every space.
void check_matmul_infos() {
  EXPECT_EQ(llmk::precisions<llmk::MatmulBackward>(),
            (std::vector<std::string>{"fp32", "bf16", "bf16-fp32grad"}));
  std::set<std::string> names;
  for (const llmk::MatmulBackwardImplInfo& info : llmk::impls<llmk::MatmulBackward>()) {
    SCOPED_TRACE(info.name);
    names.insert(info.name);
    EXPECT_TRUE(llmk_test::declares(info, Precision::fp32));
    EXPECT_FALSE(info.dbias.empty());
    EXPECT_TRUE(info.gelu == "fused" || info.gelu == "separate") << info.gelu;
  }
  for (const char* portable : {"naive", "team", "tiled"}) {
    EXPECT_EQ(names.count(portable), 1u) << portable;
    EXPECT_TRUE((llmk::available<llmk::MatmulBackward, Space>(portable))) << portable;
  }
}

// Math::tf32 computes with TF32: neither plain fp32 (Math::tf32 ignored) nor
// bf16 (the inputs rounded to 7 mantissa bits). Relative L2 tolerances cannot
// tell fp32 from TF32 (fp32 passes any), nor separate the others by a wide
// margin; exact values can: every dout element is x = 1 + 2⁻⁹ + 2⁻¹⁴ (15
// significant bits), inp and weight are 1. TF32 (10 mantissa bits, rounded
// or truncated alike) sees x as 1 + 2⁻⁹, bf16 (7) as 1, fp32 as x, and each
// sum of 256 such products is exact in float32 (15 + 8 bits), in whatever
// order: dinp = OC·x and dweight = M·x each come out as exactly one of the
// three. (dbias = Σ dout has no products: either of TF32's and fp32's.)
// Every implementation declaring tf32 on this space; none on a host space
// (TF32 is cuBLAS's: the Cuda binary runs it).
void check_tf32_rounding() {
  using Op = llmk_test::MatmulBackwardContract;
  namespace c = llmk_test::contract;
  std::vector<llmk_test::ImplPrecision> tf32;
  for (const llmk_test::ImplPrecision& ip : c::impl_precisions_of<Op, Space>())
    if (ip.precision == Precision::tf32) tf32.push_back(ip);
  if (tf32.empty()) GTEST_SKIP() << "no implementation runs Math::tf32 on " << Space::name();
  const float x = 1.0f + 0x1p-9f + 0x1p-14f, as_tf32 = 1.0f + 0x1p-9f, as_bf16 = 1.0f;
  const Op::Shape shape = Op::shape({"tf32", 2, 128, 256, 256});
  Op::Problem p = Op::make(shape, 5, Precision::tf32);
  for (float& v : p.host.dout) v = x;
  for (float& v : p.host.inp) v = 1.0f;
  for (float& v : p.host.weight) v = 1.0f;
  const c::Overwrites all(3, true);
  const std::vector<c::ArgSpec> specs = Op::args(p.shape, p.precision);
  const float sums[] = {float(shape.OC), float(shape.M())};  // dinp's terms, dweight's
  for (const llmk_test::ImplPrecision& ip : tf32) {
    SCOPED_TRACE(c::case_description(ip));
    const Op::Problem q = c::poisoned<Op>(p, all);
    const c::DeviceProblem<Op, Space> d(q);
    d.call(llmk_test::Entry::Rank2Views, Op::options(ip.impl, ip.precision, all));
    c::Outputs r;
    ASSERT_TRUE(d.download(q, r));
    for (int k = 0; k < 2; ++k) {
      const float tf32_sum = sums[k] * as_tf32, fp32_sum = sums[k] * x, bf16_sum = sums[k] * as_bf16;
      std::size_t fp32 = 0, bf16 = 0, other = 0;
      for (float v : r[std::size_t(k)]) {
        if (v == tf32_sum) continue;
        ++(v == fp32_sum ? fp32 : v == bf16_sum ? bf16 : other);
      }
      EXPECT_EQ(fp32 + bf16 + other, 0u)
          << specs[std::size_t(k)].name << ": of " << r[std::size_t(k)].size() << " elements, "
          << fp32 << " are fp32's sum " << fp32_sum << " (Math::tf32 ignored), " << bf16
          << " bf16's " << bf16_sum << ", " << other << " neither; TF32's is " << tf32_sum;
    }
    for (float v : r[2])
      ASSERT_TRUE(v == float(shape.M()) * as_tf32 || v == float(shape.M()) * x)
          << "dbias " << v << ", expected " << float(shape.M()) * x << " or TF32's "
          << float(shape.M()) * as_tf32;
  }
}

// The benchmarks' bias pass (matmul_backward_bias_pass: dbias ⟵ Σ_rows dout
// alone, as an implementation's own pass computes it) against the float64
// reference, accumulated and overwritten (from NaN), for every implementation
// with a pass of its own on this space: M = 1041 rows, past a CPU's 1024-row
// chunk and 3 of the host's 512-row segments.
void check_bias_pass() {
  const llmk_test::Shape shape{"biaspass", 3, 347, 1, 67};
  const llmk_test::HostProblem p = llmk_test::make_problem(shape, 41, {});
  const std::int64_t M = shape.M(), OC = shape.OC;
  int tested = 0;
  for (const llmk::MatmulBackwardImplInfo& info : llmk::impls<llmk::MatmulBackward>()) {
    if (info.dbias == "fused" || !llmk::available<llmk::MatmulBackward, Space>(info.name)) continue;
    ++tested;
    for (const bool overwrite : {false, true}) {
      SCOPED_TRACE(info.name + (overwrite ? ": overwritten" : ": accumulated"));
      llmk::Matrix<Space> dout("dout", M, OC);
      llmk::Vector<Space> dbias("dbias", OC);
      auto h_dout = Kokkos::create_mirror_view(dout);
      auto h_dbias = Kokkos::create_mirror_view(dbias);
      for (std::int64_t i = 0; i < M * OC; ++i) h_dout.data()[i] = p.dout[std::size_t(i)];
      for (std::int64_t i = 0; i < OC; ++i)
        h_dbias(i) = overwrite ? std::nanf("") : p.dbias[std::size_t(i)];
      Kokkos::deep_copy(dout, h_dout);
      Kokkos::deep_copy(dbias, h_dbias);
      llmk::Context<Space> ctx;
      llmk::MatmulBackwardOptions options;
      options.dbias_update = overwrite ? llmk::Update::overwrite : llmk::Update::accumulate;
      llmk::matmul_backward_bias_pass(ctx, dbias, dout, info.name, options);
      ctx.exec().fence();
      Kokkos::deep_copy(h_dbias, dbias);
      const llmk_test::Gradients64 ref = llmk_test::reference_backward(
          p, llmk::reference::Method::Auto, 0, {false, false, overwrite});
      const std::vector<float> got(h_dbias.data(), h_dbias.data() + OC);
      EXPECT_TRUE(llmk_test::matches_reference("dbias", got, ref.dbias, 0));
    }
  }
  if (tested == 0) GTEST_SKIP() << "every implementation on " << Space::name() << " fuses dbias";
}

// ±Inf in one element of dout, inp or weight (matmul_backward.hpp's
// contract): no exception; exactly the output elements whose sums include it
// are infinite, with the float64 reference's sign (one infinite term among
// finite ones), and every other element is within tolerance of the
// reference, which there is that of the problem without the Inf. The
// elements that must be infinite are written out here from the products
// (dout(m, oc): dinp's row m, dweight's row oc, dbias(oc); inp(m, c):
// dweight's column c; weight(oc, c): dinp's column c), and the reference
// is checked to agree, so the test plants what it says. Accumulated and
// overwritten (from poison), GELU off and on.
void check_inf_inputs(const llmk_test::ImplPrecision& ip) {
  using Op = llmk_test::MatmulBackwardContract;
  namespace c = llmk_test::contract;
  const llmk_test::ImplCatalog cat = Op::catalog<Space>();
  for (const Op::Shape& shape : c::variant_shapes<Op>(Op::nan_shape())) {
    const Op::Problem clean = Op::make(shape, 13, ip.precision);
    const std::vector<c::ArgSpec> specs = Op::args(clean.shape, clean.precision);
    const std::int64_t M = shape.M(), C = shape.C, OC = shape.OC;
    const std::int64_t m0 = M / 2, c0 = C / 3, oc0 = OC / 3;
    // Per output (dinp M × C, dweight OC × C, dbias OC): whether an Inf in
    // input `in` reaches the element.
    const auto reaches = [&](Op::Arg in, std::size_t k, std::int64_t i) {
      const std::int64_t row = k == 2 ? 0 : i / C, col = k == 2 ? i : i % C;
      switch (in) {
        case Op::dout:
          return (k == 0 && row == m0) || (k == 1 && row == oc0) || (k == 2 && col == oc0);
        case Op::inp: return k == 1 && col == c0;
        default: return k == 0 && col == c0;  // weight
      }
    };
    const float inf = std::numeric_limits<float>::infinity();
    for (const Op::Arg in : {Op::dout, Op::inp, Op::weight}) {
      const std::int64_t at =
          in == Op::dout ? m0 * OC + oc0 : in == Op::inp ? m0 * C + c0 : oc0 * C + c0;
      for (const float value : {inf, -inf}) {
        Op::Problem p = clean;
        Op::values(p, in)[std::size_t(at)] = value;
        for (const bool overwrite : {false, true}) {
          const c::Overwrites o(3, overwrite);
          SCOPED_TRACE(shape.name + ": " + (value > 0 ? "+" : "-") + "Inf in " + specs[in].name +
                       "[" + std::to_string(at) + "], " + c::describe_overwrites(specs, o));
          const std::vector<std::vector<double>> ref = Op::reference(p, o);
          const std::vector<std::vector<double>> without = Op::reference(clean, o);
          std::size_t infinite = 0;
          for (std::size_t k = 0; k < ref.size(); ++k)
            for (std::size_t i = 0; i < ref[k].size(); ++i) {
              const bool expected = reaches(in, k, std::int64_t(i));
              infinite += expected;
              ASSERT_EQ(std::isinf(ref[k][i]), expected)
                  << "the reference's " << specs[k].name << "[" << i << "] = " << ref[k][i];
              if (!expected)
                ASSERT_EQ(ref[k][i], without[k][i]) << specs[k].name << "[" << i << "]";
            }
          ASSERT_GT(infinite, 0u);
          const Op::Problem q = c::poisoned<Op>(p, o);
          const c::DeviceProblem<Op, Space> d(q);
          d.call(llmk_test::Entry::Rank2Views, Op::options(ip.impl, ip.precision, o));
          c::Outputs r;
          ASSERT_TRUE(d.download(q, r));
          c::expect_matches_reference<Op>(
              p, o, r, ref, llmk_test::promises_rounding_once(cat, ip.impl, ip.precision));
        }
      }
    }
  }
}

[[maybe_unused]] const bool registered = [] {
  llmk_test::contract::add_test("matmul_backward", "Impls", "MatmulInfos",
                                "precisions, dbias and GELU, portable kernels",
                                check_matmul_infos);
  llmk_test::contract::add_test("matmul_backward", "Tf32", "UsesTf32",
                                "Math::tf32's results are TF32's, not fp32's or bf16's",
                                check_tf32_rounding);
  llmk_test::contract::add_test("matmul_backward", "BiasPass", "AgainstReference",
                                "matmul_backward_bias_pass of every implementation with a pass",
                                check_bias_pass);
  namespace c = llmk_test::contract;
  for (const llmk_test::ImplPrecision& ip :
       c::impl_precisions_of<llmk_test::MatmulBackwardContract, Space>())
    c::add_test("matmul_backward", "InfInputs", c::case_name(ip), c::case_description(ip),
                [=] { check_inf_inputs(ip); });
  return true;
}();

}  // namespace
