// Contract (a): results against the float64 reference.
//   Accuracy   every implementation ("auto" included) × every precision its
//              info declares × Op::shapes(), outputs accumulated (+=) from
//              random initial values; the entry point cycles with the shape
//   Overwrite  each output overwritten (=) alone and all at once, the others
//              accumulated, on Op::overwrite_shapes(): overwritten outputs
//              start poisoned (NaN, ±Inf, 1e30) that must not come through
//   NanInputs  NaN in one element of each input: exactly the output elements
//              the reference makes NaN are NaN, the others are right (an
//              adapter with nan_bound(): at least those, at most the bound's)
//   Large      Op::large_shapes() (label `large`; an adapter's large_skip()
//              may leave a slow implementation out on a space)
// Each within Op::tolerance; bf16 outputs rounded once where the
// implementation's info says `rounds_once`; guard bands and inputs untouched.
#pragma once

#include "contract/device_problem.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

namespace llmk_test::contract {

// An operation may let a NaN input reach more outputs than its reference
// does, where that depends on how it computes: attention's masked products
// are 0 in dense GEMMs and absent in causal loops, and 0 · NaN is NaN. Such
// an adapter has
//   static std::vector<std::vector<double>> nan_bound(const Problem&, const Overwrites&);
// per output the most NaN a result may have (a NaN wherever the reference
// has one, and more): NanInputs then requires NaN where the reference has
// it, allows it where the bound has it, and compares every other element.
template <class Op, class = void>
struct has_nan_bound : std::false_type {};
template <class Op>
struct has_nan_bound<Op, std::void_t<decltype(Op::nan_bound(
                             std::declval<const typename Op::Problem&>(),
                             std::declval<const Overwrites&>()))>> : std::true_type {};

// The reference with NaN where a result is NaN and the bound allows it.
template <class Op>
void allow_bounded_nan(const typename Op::Problem& p, const Overwrites& o, const Outputs& r,
                       std::vector<std::vector<double>>& ref) {
  if constexpr (has_nan_bound<Op>::value) {
    const std::vector<std::vector<double>> bound = Op::nan_bound(p, o);
    for (std::size_t k = 0; k < ref.size() && k < r.size() && k < bound.size(); ++k)
      for (std::size_t i = 0; i < ref[k].size() && i < r[k].size() && i < bound[k].size(); ++i)
        if (std::isnan(r[k][i]) && std::isnan(bound[k][i])) ref[k][i] = bound[k][i];
  } else {
    (void)p, (void)o, (void)r, (void)ref;
  }
}

template <class Op, class Space>
void check_accuracy(const ImplPrecision& ip, const typename Op::Shape& shape, Entry entry) {
  const ImplCatalog cat = Op::template catalog<Space>();
  const typename Op::Problem p = Op::make(shape, 2024, ip.precision);
  const DeviceProblem<Op, Space> d(p);
  const Overwrites none(output_indices(d.specs()).size(), false);
  d.call(entry, Op::options(ip.impl, none));
  Outputs r;
  ASSERT_TRUE(d.download(p, r));
  expect_matches_reference<Op>(d.specs(), r, Op::reference(p, none), ip.precision,
                               promises_rounding_once(cat, ip.impl, ip.precision));
}

template <class Op, class Space>
void check_overwrite(const ImplPrecision& ip) {
  const ImplCatalog cat = Op::template catalog<Space>();
  for (const typename Op::Shape& shape : Op::overwrite_shapes()) {
    const typename Op::Problem p = Op::make(shape, 7, ip.precision);
    const std::vector<ArgSpec> specs = Op::args(p.shape, p.precision);
    int i = 0;
    for (const Overwrites& o : overwrite_combinations(output_indices(specs).size())) {
      const Entry entry = Entry(i++ % 3);
      SCOPED_TRACE(shape.name + ": " + describe_overwrites(specs, o) + ", entry " +
                   entry_test_name(entry));
      const typename Op::Problem bad = poisoned<Op>(p, o);
      const DeviceProblem<Op, Space> d(bad);
      d.call(entry, Op::options(ip.impl, o));
      Outputs r;
      ASSERT_TRUE(d.download(bad, r));
      // The reference from the clean problem: overwritten outputs ignore their
      // initial values, so every element is finite and must come back so.
      expect_matches_reference<Op>(specs, r, Op::reference(p, o), ip.precision,
                                   promises_rounding_once(cat, ip.impl, ip.precision));
    }
  }
}

template <class Op, class Space>
void check_nan_inputs(const ImplPrecision& ip) {
  const ImplCatalog cat = Op::template catalog<Space>();
  const typename Op::Problem clean = Op::make(Op::nan_shape(), 11, ip.precision);
  const std::vector<ArgSpec> specs = Op::args(clean.shape, clean.precision);
  const Overwrites none(output_indices(specs).size(), false);
  for (std::size_t i : input_indices(specs)) {
    const std::int64_t n = specs[i].elements();
    if (n == 0) continue;
    typename Op::Problem p = clean;
    const std::int64_t at = n / 2 + (n > 2 ? 1 : 0);
    Op::values(p, i)[std::size_t(at)] = std::numeric_limits<float>::quiet_NaN();
    SCOPED_TRACE("NaN in " + specs[i].name + "[" + std::to_string(at) + "]");
    const DeviceProblem<Op, Space> d(p);
    d.call(Entry::Rank2Views, Op::options(ip.impl, none));
    Outputs r;
    ASSERT_TRUE(d.download(p, r));
    std::vector<std::vector<double>> ref = Op::reference(p, none);
    bool any_nan = false;
    for (const std::vector<double>& out : ref)
      for (double x : out) any_nan = any_nan || std::isnan(x);
    EXPECT_TRUE(any_nan) << "the reference has no NaN: the test plants nothing";
    allow_bounded_nan<Op>(p, none, r, ref);
    expect_matches_reference<Op>(specs, r, ref, ip.precision,
                                 promises_rounding_once(cat, ip.impl, ip.precision));
  }
}

// An adapter may skip a slow implementation's large shapes on a space:
//   template <class Space> static std::string large_skip(const std::string& impl);
// a reason (then GTEST_SKIP with it), or empty.
template <class Op, class Space, class = void>
struct has_large_skip : std::false_type {};
template <class Op, class Space>
struct has_large_skip<Op, Space,
                      std::void_t<decltype(Op::template large_skip<Space>(std::string()))>>
    : std::true_type {};

template <class Op, class Space>
void check_large(const ImplPrecision& ip, const typename Op::Shape& shape) {
  if constexpr (has_large_skip<Op, Space>::value) {
    const std::string why = Op::template large_skip<Space>(ip.impl);
    if (!why.empty()) GTEST_SKIP() << why;
  }
  const auto since = [](std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  const ImplCatalog cat = Op::template catalog<Space>();
  const typename Op::Problem p = Op::make(shape, 2024, ip.precision);
  const Overwrites none(output_indices(Op::args(p.shape, p.precision)).size(), false);
  auto t0 = std::chrono::steady_clock::now();
  const std::vector<std::vector<double>> ref = Op::reference(p, none);
  std::printf("float64 reference: %.2f s\n", since(t0));
  const DeviceProblem<Op, Space> d(p);
  t0 = std::chrono::steady_clock::now();
  d.call(Entry::Rank3Views, Op::options(ip.impl, none));
  std::printf("%s %s on %s: %.3f s\n", ip.impl.c_str(),
              llmk::reference::precision_name(ip.precision), Space::name(), since(t0));
  Outputs r;
  ASSERT_TRUE(d.download(p, r));
  expect_matches_reference<Op>(d.specs(), r, ref, ip.precision,
                               promises_rounding_once(cat, ip.impl, ip.precision));
}

template <class Op, class Space>
void register_accuracy_tests() {
  const std::string op = Op::name();
  int k = 0;  // the entry point cycles with the shape, from another one for each case
  for (const ImplPrecision& ip : impl_precisions_of<Op, Space>()) {
    int i = k++;
    for (const typename Op::Shape& shape : Op::shapes()) {
      const Entry entry = Entry(i++ % 3);
      add_test(op, "Accuracy",
               case_name(ip) + "_" + shape.name + "_" + entry_test_name(entry),
               case_description(ip) + ", shape " + shape.name + ", entry " +
                   entry_test_name(entry),
               [=] { check_accuracy<Op, Space>(ip, shape, entry); });
    }
    add_test(op, "Overwrite", case_name(ip), case_description(ip),
             [=] { check_overwrite<Op, Space>(ip); });
    add_test(op, "NanInputs", case_name(ip), case_description(ip),
             [=] { check_nan_inputs<Op, Space>(ip); });
    for (const typename Op::Shape& shape : Op::large_shapes())
      add_test(op, "Large", case_name(ip) + "_" + shape.name,
               case_description(ip) + ", shape " + shape.name,
               [=] { check_large<Op, Space>(ip, shape); });
  }
}

}  // namespace llmk_test::contract
