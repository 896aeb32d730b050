// Contract (b): bitwise repeatable results, for every implementation whose
// info says `deterministic`, in every precision it declares, on
// Op::determinism_shape() (several blocks of every kind, remainders
// everywhere): three calls bitwise equal; the rank-3 and raw-pointer entries,
// an explicit context, and "auto" where it stands for the implementation,
// bitwise equal to the rank-2 call.
#pragma once

#include "contract/device_problem.hpp"

namespace llmk_test::contract {

template <class Op, class Space>
void check_determinism(const ImplPrecision& ip) {
  const ImplCatalog cat = Op::template catalog<Space>();
  const typename Op::Problem p = Op::make(Op::determinism_shape(), 2024, ip.precision);
  const std::vector<ArgSpec> specs = Op::args(p.shape, p.precision);
  const Overwrites none(output_indices(specs).size(), false);
  const typename Op::Options options = Op::options(ip.impl, none);
  // A fresh problem, one call, its outputs.
  const auto run = [&](Entry entry, llmk::Context<Space>* ctx, const typename Op::Options& o) {
    const DeviceProblem<Op, Space> d(p);
    d.call(entry, o, ctx);
    Outputs r;
    EXPECT_TRUE(d.download(p, r));
    return r;
  };
  const Outputs first = run(Entry::Rank2Views, nullptr, options);
  expect_matches_reference<Op>(specs, first, Op::reference(p, none), ip.precision,
                               promises_rounding_once(cat, ip.impl, ip.precision));
  for (int i = 1; i < 3; ++i)
    EXPECT_TRUE(bitwise_equal(specs, run(Entry::Rank2Views, nullptr, options), first))
        << "rank-2 call " << i + 1;
  EXPECT_TRUE(bitwise_equal(specs, run(Entry::Rank3Views, nullptr, options), first)) << "rank 3";
  EXPECT_TRUE(bitwise_equal(specs, run(Entry::RawPointers, nullptr, options), first))
      << "raw pointers";
  {
    llmk::Context<Space> ctx{Space()};
    EXPECT_TRUE(bitwise_equal(specs, run(Entry::Rank2Views, &ctx, options), first))
        << "an explicit context";
    EXPECT_TRUE(bitwise_equal(specs, run(Entry::RawPointers, &ctx, options), first))
        << "the same context again";
  }
  if (cat.auto_impl(ip.precision) == ip.impl)
    EXPECT_TRUE(bitwise_equal(specs, run(Entry::Rank2Views, nullptr, Op::options("auto", none)),
                              first))
        << "\"auto\", which stands for " << ip.impl;
}

template <class Op, class Space>
void register_determinism_tests() {
  for (const ImplPrecision& ip : impl_precisions_of<Op, Space>(true))
    add_test(Op::name(), "Determinism", case_name(ip), case_description(ip),
             [=] { check_determinism<Op, Space>(ip); });
}

}  // namespace llmk_test::contract
