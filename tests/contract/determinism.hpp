// Contract (b): bitwise repeatable results, for every implementation whose
// info says `deterministic`, in every precision it declares, on
// Op::determinism_shape() (several blocks of every kind, remainders
// everywhere) in each variant: three calls bitwise equal; the rank-3 and
// raw-pointer entries, an explicit context, and "auto" where it stands for the
// implementation, bitwise equal to the rank-2 call; then with every output
// overwritten, three calls bitwise equal.
#pragma once

#include "contract/device_problem.hpp"

namespace llmk_test::contract {

template <class Op, class Space>
void check_determinism(const ImplPrecision& ip) {
  const ImplCatalog cat = Op::template catalog<Space>();
  for (const typename Op::Shape& shape : variant_shapes<Op>(Op::determinism_shape())) {
    SCOPED_TRACE(shape.name);
    const typename Op::Problem p = Op::make(shape, 2024, ip.precision);
    const std::vector<ArgSpec> specs = Op::args(p.shape, p.precision);
    const std::size_t n_out = output_indices(specs).size();
    const Overwrites none(n_out, false), all(n_out, true);
    const typename Op::Options options = Op::options(ip.impl, ip.precision, none);
    // A fresh problem (q: p, or p poisoned), one call, its outputs.
    const auto run = [&](Entry entry, llmk::Context<Space>* ctx, const typename Op::Options& o,
                         const typename Op::Problem& q) {
      const DeviceProblem<Op, Space> d(q);
      d.call(entry, o, ctx);
      Outputs r;
      EXPECT_TRUE(d.download(q, r));
      return r;
    };
    // Three rank-2 calls with the updates `o`: the first against the
    // reference, the others bitwise equal to it, which is returned.
    const auto three_calls = [&](const Overwrites& o) {
      const typename Op::Problem q = poisoned<Op>(p, o);
      const typename Op::Options with = Op::options(ip.impl, ip.precision, o);
      const Outputs first = run(Entry::Rank2Views, nullptr, with, q);
      expect_matches_reference<Op>(p, o, first, Op::reference(p, o),
                                   promises_rounding_once(cat, ip.impl, ip.precision));
      for (int i = 1; i < 3; ++i)
        EXPECT_TRUE(bitwise_equal(specs, run(Entry::Rank2Views, nullptr, with, q), first))
            << describe_overwrites(specs, o) << ", rank-2 call " << i + 1;
      return first;
    };
    const Outputs first = three_calls(none);
    EXPECT_TRUE(bitwise_equal(specs, run(Entry::Rank3Views, nullptr, options, p), first))
        << "rank 3";
    EXPECT_TRUE(bitwise_equal(specs, run(Entry::RawPointers, nullptr, options, p), first))
        << "raw pointers";
    {
      llmk::Context<Space> ctx{Space()};
      EXPECT_TRUE(bitwise_equal(specs, run(Entry::Rank2Views, &ctx, options, p), first))
          << "an explicit context";
      EXPECT_TRUE(bitwise_equal(specs, run(Entry::RawPointers, &ctx, options, p), first))
          << "the same context again";
    }
    if (cat.auto_impl(ip.precision) == ip.impl)
      EXPECT_TRUE(bitwise_equal(
          specs, run(Entry::Rank2Views, nullptr, Op::options("auto", ip.precision, none), p),
          first))
          << "\"auto\", which stands for " << ip.impl;
    // Overwritten outputs (other code paths: no initial value read).
    three_calls(all);
  }
}

template <class Op, class Space>
void register_determinism_tests() {
  for (const ImplPrecision& ip : impl_precisions_of<Op, Space>(true))
    add_test(Op::name(), "Determinism", case_name(ip), case_description(ip),
             [=] { check_determinism<Op, Space>(ip); });
}

}  // namespace llmk_test::contract
