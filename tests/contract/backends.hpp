// Backends against each other on the same problems (the backends binary, built
// where Kokkos has two execution spaces): every implementation available on
// the tested space × every precision it runs × Op::shapes() without the empty
// ones, against the same implementation on the reference space ("auto" there
// where it lacks it): bitwise equal where the adapter says results depend on
// the sizes alone (Op::same_bits_on_host_spaces, for two host spaces: a
// different thread count must not change a bit), else within the sum of the
// two sides' tolerances.
#pragma once

#include "contract/device_problem.hpp"

namespace llmk_test::contract {

template <class Op, class Space>
Outputs outputs_on(const typename Op::Problem& p, const std::string& impl) {
  const DeviceProblem<Op, Space> d(p);
  const Overwrites none(output_indices(d.specs()).size(), false);
  d.call(Entry::Rank2Views, Op::options(impl, none));
  Outputs r;
  EXPECT_TRUE(d.download(p, r)) << Space::name();
  return r;
}

template <class Op, class Tested, class Reference>
void check_backends_agree(const ImplPrecision& ip) {
  const ImplCatalog ref_cat = Op::template catalog<Reference>();
  const std::string ref_impl =
      ip.impl == "auto" || ref_cat.available(ip.impl) ? ip.impl : std::string("auto");
  const bool bitwise = Op::same_bits_on_host_spaces && is_host_space<Tested> &&
                       is_host_space<Reference> && ref_impl == ip.impl;
  for (const typename Op::Shape& shape : Op::shapes()) {
    SCOPED_TRACE(shape.name + (bitwise ? ", bitwise" : ", within the tolerances"));
    const typename Op::Problem p = Op::make(shape, 2024, ip.precision);
    const Outputs tested = outputs_on<Op, Tested>(p, ip.impl);
    const Outputs reference = outputs_on<Op, Reference>(p, ref_impl);
    const std::vector<ArgSpec> specs = Op::args(p.shape, p.precision);
    if (bitwise)
      EXPECT_TRUE(bitwise_equal(specs, tested, reference))
          << Tested::name() << " against " << Reference::name();
    else
      EXPECT_TRUE(close_to<Op>(specs, ip.precision, tested, reference))
          << Tested::name() << " against " << Reference::name();
  }
}

template <class Op, class Tested, class Reference>
void register_backend_tests() {
  const std::string aspect = std::string(Tested::name()) + "Vs" + Reference::name();
  for (const ImplPrecision& ip : impl_precisions_of<Op, Tested>())
    add_test(Op::name(), aspect, case_name(ip), case_description(ip),
             [=] { check_backends_agree<Op, Tested, Reference>(ip); });
}

}  // namespace llmk_test::contract
