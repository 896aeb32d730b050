// Contract (f): zero-sized dimensions are valid no-ops. For every
// implementation × precision × Op::empty_shapes() in each variant ×
// (accumulate, each output overwritten alone, all overwritten) × every entry
// point (and raw pointers with null for every array of no elements): an
// overwritten output that has elements is written with exactly what the
// reference says (zeros for sums over nothing), poisoned initial values and
// all; everything else, guard bands included, bitwise as it was. Such a call
// needs no workspace.
#pragma once

#include "contract/device_problem.hpp"

#include <cmath>

namespace llmk_test::contract {

// Exactly the reference's values (converted to float): a call without work
// computes nothing that could round. (Zeros of either sign: a sum over
// nothing times a negative factor, matmul's gelu', is −0 in the reference.)
inline ::testing::AssertionResult exactly(const char* what, const std::vector<float>& out,
                                          const std::vector<double>& ref) {
  if (out.size() != ref.size())
    return ::testing::AssertionFailure() << what << " has " << out.size() << " elements, "
                                         << ref.size() << " expected";
  for (std::size_t i = 0; i < out.size(); ++i) {
    const float expected = float(ref[i]);
    if (out[i] != expected && !(std::isnan(out[i]) && std::isnan(expected)))
      return ::testing::AssertionFailure()
             << what << "[" << i << "] is " << out[i] << ", expected exactly " << expected;
  }
  return ::testing::AssertionSuccess();
}

template <class Op, class Space>
void check_empty(const ImplPrecision& ip) {
  for (const typename Op::Shape& shape : variant_shapes<Op>(Op::empty_shapes())) {
    const typename Op::Problem clean = Op::make(shape, 5, ip.precision);
    const std::vector<ArgSpec> specs = Op::args(clean.shape, clean.precision);
    const std::vector<std::size_t> outs = output_indices(specs);
    std::vector<Overwrites> updates{Overwrites(outs.size(), false)};
    for (const Overwrites& o : overwrite_combinations(specs)) updates.push_back(o);
    for (const Overwrites& o : updates) {
      const typename Op::Options options = Op::options(ip.impl, ip.precision, o);
      EXPECT_EQ(Op::template workspace_bytes<Space>(shape, options, ip.precision), 0u)
          << shape.name << ": a call without work needs no workspace";
      const std::vector<std::vector<double>> ref = Op::reference(clean, o);
      const typename Op::Problem p = poisoned<Op>(clean, o);
      for (int entry = 0; entry < 4; ++entry) {
        SCOPED_TRACE(shape.name + ", " + describe_overwrites(specs, o) + ", " +
                     (entry < 3 ? entry_test_name(Entry(entry)) : "raw with null pointers"));
        const DeviceProblem<Op, Space> d(p);
        if (entry < 3)
          d.call(Entry(entry), options);
        else
          d.call_with_null_empties(options);
        Outputs r;
        ASSERT_TRUE(d.download(p, r));
        for (std::size_t k = 0; k < outs.size(); ++k)
          EXPECT_TRUE(exactly(specs[outs[k]].name.c_str(), r[k], ref[k]));
      }
    }
  }
}

template <class Op, class Space>
void register_empty_tests() {
  for (const ImplPrecision& ip : impl_precisions_of<Op, Space>())
    add_test(Op::name(), "EmptyShapes", case_name(ip), case_description(ip),
             [=] { check_empty<Op, Space>(ip); });
}

}  // namespace llmk_test::contract
