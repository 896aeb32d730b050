// Contract (a): results against the float64 reference.
//   Accuracy   every implementation ("auto" included) × every precision its
//              info declares × Op::shapes() in each variant, outputs
//              accumulated (+=) from random initial values, through each of
//              the three entry points
//   Overwrite  each output overwritten (=) alone and all at once, the others
//              accumulated, on Op::overwrite_shapes() in each variant:
//              overwritten outputs start poisoned (NaN, ±Inf, 1e30) that must
//              not come through
//   NanInputs  NaN in one element of each float input, every output accumulated,
//              then every output overwritten: exactly the output elements the
//              reference makes NaN are NaN, the others are right (an
//              adapter with nan_bound(): at least those, at most the bound's)
//   Large      Op::large_shapes() in each variant (label `large`)
// Each within Op::tolerance; bf16 outputs rounded once where the
// implementation's info says `rounds_once`; guard bands and inputs untouched.
#pragma once

#include "contract/device_problem.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
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
// The bound may depend on the implementation (its tiles): then it is
//   static std::vector<std::vector<double>> nan_bound(const Problem&, const Overwrites&,
//                                                     const std::string& impl);
// given the implementation's name ("auto" resolved).
template <class Op, class = void>
struct has_nan_bound : std::false_type {};
template <class Op>
struct has_nan_bound<Op, std::void_t<decltype(Op::nan_bound(
                             std::declval<const typename Op::Problem&>(),
                             std::declval<const Overwrites&>()))>> : std::true_type {};
template <class Op, class = void>
struct has_impl_nan_bound : std::false_type {};
template <class Op>
struct has_impl_nan_bound<Op, std::void_t<decltype(Op::nan_bound(
                                  std::declval<const typename Op::Problem&>(),
                                  std::declval<const Overwrites&>(),
                                  std::declval<const std::string&>()))>> : std::true_type {};

// The reference with NaN where a result is NaN and the bound allows it.
template <class Op>
void allow_bounded_nan(const typename Op::Problem& p, const Overwrites& o, const Outputs& r,
                       std::vector<std::vector<double>>& ref, const std::string& impl) {
  if constexpr (has_nan_bound<Op>::value || has_impl_nan_bound<Op>::value) {
    std::vector<std::vector<double>> bound;
    if constexpr (has_impl_nan_bound<Op>::value)
      bound = Op::nan_bound(p, o, impl);
    else
      bound = Op::nan_bound(p, o);
    for (std::size_t k = 0; k < ref.size() && k < r.size() && k < bound.size(); ++k)
      for (std::size_t i = 0; i < ref[k].size() && i < r[k].size() && i < bound[k].size(); ++i)
        if (std::isnan(r[k][i]) && std::isnan(bound[k][i])) ref[k][i] = bound[k][i];
  } else {
    (void)p, (void)o, (void)r, (void)ref, (void)impl;
  }
}


// The rank-2 entry against the reference; the rank-3 and raw-pointer entries
// (the same problem reshaped) bitwise equal to it where the implementation
// promises repeatable results, else against the reference too.
template <class Op, class Space>
void check_accuracy(const ImplPrecision& ip, const typename Op::Shape& shape) {
  const ImplCatalog cat = Op::template catalog<Space>();
  const typename Op::Problem p = Op::make(shape, 2024, ip.precision);
  const std::vector<ArgSpec> specs = Op::args(p.shape, p.precision);
  const Overwrites none(output_indices(specs).size(), false);
  const std::vector<std::vector<double>> ref = Op::reference(p, none);
  const bool repeatable = promises_bitwise_repeatable(cat, ip.impl, ip.precision);
  const DeviceProblem<Op, Space> d(p);
  Outputs first;
  for (const Entry entry : {Entry::Rank2Views, Entry::Rank3Views, Entry::RawPointers}) {
    SCOPED_TRACE(std::string("entry ") + entry_test_name(entry));
    if (entry != Entry::Rank2Views) d.reset_outputs(Space(), p);
    d.call(entry, Op::options(ip.impl, ip.precision, none));
    Outputs r;
    ASSERT_TRUE(d.download(p, r));
    if (entry == Entry::Rank2Views || !repeatable)
      expect_matches_reference<Op>(p, none, r, ref,
                                   promises_rounding_once(cat, ip.impl, ip.precision));
    if (entry == Entry::Rank2Views)
      first = std::move(r);
    else if (repeatable)
      EXPECT_TRUE(bitwise_equal(specs, r, first)) << "not the rank-2 entry's bits";
  }
}

template <class Op, class Space>
void check_overwrite(const ImplPrecision& ip) {
  const ImplCatalog cat = Op::template catalog<Space>();
  for (const typename Op::Shape& shape : variant_shapes<Op>(Op::overwrite_shapes())) {
    const typename Op::Problem p = Op::make(shape, 7, ip.precision);
    const std::vector<ArgSpec> specs = Op::args(p.shape, p.precision);
    int i = 0;
    for (const Overwrites& o : overwrite_combinations(specs)) {
      const Entry entry = Entry(i++ % 3);
      SCOPED_TRACE(shape.name + ": " + describe_overwrites(specs, o) + ", entry " +
                   entry_test_name(entry));
      const typename Op::Problem bad = poisoned<Op>(p, o);
      const DeviceProblem<Op, Space> d(bad);
      d.call(entry, Op::options(ip.impl, ip.precision, o));
      Outputs r;
      ASSERT_TRUE(d.download(bad, r));
      // The reference from the clean problem: overwritten outputs ignore their
      // initial values, so every element is finite and must come back so.
      expect_matches_reference<Op>(p, o, r, Op::reference(p, o),
                                   promises_rounding_once(cat, ip.impl, ip.precision));
    }
  }
}

template <class Op, class Space>
void check_nan_inputs(const ImplPrecision& ip) {
  const ImplCatalog cat = Op::template catalog<Space>();
  for (const typename Op::Shape& shape : variant_shapes<Op>(Op::nan_shape())) {
    const typename Op::Problem clean = Op::make(shape, 11, ip.precision);
    const std::vector<ArgSpec> specs = Op::args(clean.shape, clean.precision);
    const std::size_t n_out = output_indices(specs).size();
    for (std::size_t i : input_indices(specs)) {
      const std::int64_t n = specs[i].elements();
      if (n == 0 || specs[i].int32) continue;  // (an int32 input has no NaN)
      typename Op::Problem p = clean;
      const std::int64_t at = n / 2 + (n > 2 ? 1 : 0);
      Op::values(p, i)[std::size_t(at)] = std::numeric_limits<float>::quiet_NaN();
      for (const bool overwrite : {false, true}) {
        const Overwrites o(n_out, overwrite);
        SCOPED_TRACE(shape.name + ": NaN in " + specs[i].name + "[" + std::to_string(at) + "], " +
                     describe_overwrites(specs, o));
        const typename Op::Problem q = poisoned<Op>(p, o);
        const DeviceProblem<Op, Space> d(q);
        d.call(Entry::Rank2Views, Op::options(ip.impl, ip.precision, o));
        Outputs r;
        ASSERT_TRUE(d.download(q, r));
        std::vector<std::vector<double>> ref = Op::reference(p, o);
        bool any_nan = false;
        for (const std::vector<double>& out : ref)
          for (double x : out) any_nan = any_nan || std::isnan(x);
        EXPECT_TRUE(any_nan) << "the reference has no NaN: the test plants nothing";
        allow_bounded_nan<Op>(p, o, r, ref,
                              ip.impl == "auto" ? cat.auto_impl(ip.precision) : ip.impl);
        expect_matches_reference<Op>(p, o, r, ref,
                                     promises_rounding_once(cat, ip.impl, ip.precision));
      }
    }
  }
}

template <class Op, class Space>
void check_large(const ImplPrecision& ip, const typename Op::Shape& shape) {
  const auto since = [](std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  const std::string slow = Op::template slow_reason<Space>(ip.impl, shape);
  if (!slow.empty() && !std::getenv("LLMK_TEST_SLOW"))
    GTEST_SKIP() << slow << "; set LLMK_TEST_SLOW=1 to run it";
  const ImplCatalog cat = Op::template catalog<Space>();
  const typename Op::Problem p = Op::make(shape, 2024, ip.precision);
  const Overwrites none(output_indices(Op::args(p.shape, p.precision)).size(), false);
  auto t0 = std::chrono::steady_clock::now();
  const std::vector<std::vector<double>> ref = Op::reference(p, none);
  std::printf("float64 reference: %.2f s\n", since(t0));
  const DeviceProblem<Op, Space> d(p);
  t0 = std::chrono::steady_clock::now();
  d.call(Entry::Rank3Views, Op::options(ip.impl, ip.precision, none));
  std::printf("%s %s on %s: %.3f s\n", ip.impl.c_str(),
              llmk::reference::precision_name(ip.precision), Space::name(), since(t0));
  Outputs r;
  ASSERT_TRUE(d.download(p, r));
  expect_matches_reference<Op>(p, none, r, ref,
                               promises_rounding_once(cat, ip.impl, ip.precision));
}

template <class Op, class Space>
void register_accuracy_tests() {
  const std::string op = Op::name();
  for (const ImplPrecision& ip : impl_precisions_of<Op, Space>()) {
    for (const typename Op::Shape& shape : variant_shapes<Op>(Op::shapes()))
      add_test(op, "Accuracy", case_name(ip) + "_" + shape.name,
               case_description(ip) + ", shape " + shape.name,
               [=] { check_accuracy<Op, Space>(ip, shape); });
    add_test(op, "Overwrite", case_name(ip), case_description(ip),
             [=] { check_overwrite<Op, Space>(ip); });
    add_test(op, "NanInputs", case_name(ip), case_description(ip),
             [=] { check_nan_inputs<Op, Space>(ip); });
    for (const typename Op::Shape& shape : variant_shapes<Op>(Op::large_shapes()))
      add_test(op, "Large", case_name(ip) + "_" + shape.name,
               case_description(ip) + ", shape " + shape.name,
               [=] { check_large<Op, Space>(ip, shape); });
  }
}

}  // namespace llmk_test::contract
