// Backends against each other on the same problems (the backends binary, built
// where Kokkos has two execution spaces): every implementation available on
// the tested space × every precision it runs × Op::shapes() in each variant,
// against the same implementation on the reference space ("auto" there where
// it lacks it): bitwise equal where the adapter says results depend on the
// sizes alone (Op::same_bits_on_host_spaces, for two host spaces: a different
// thread count must not change a bit), else within the sum of the two sides'
// tolerances. A precision the reference space does not run (tf32 on a host)
// is compared with one of the same element types that it runs (fp32).
#pragma once

#include "contract/device_problem.hpp"

namespace llmk_test::contract {

template <class Op, class Space>
Outputs outputs_on(const typename Op::Problem& p, const std::string& impl, Precision precision) {
  const DeviceProblem<Op, Space> d(p);
  const Overwrites none(output_indices(d.specs()).size(), false);
  d.call(Entry::Rank2Views, Op::options(impl, precision, none));
  Outputs r;
  EXPECT_TRUE(d.download(p, r)) << Space::name();
  return r;
}

// Whether two precisions give every argument the same element type.
template <class Op>
bool same_element_types(const typename Op::Shape& shape, Precision a, Precision b) {
  const std::vector<ArgSpec> x = Op::args(shape, a), y = Op::args(shape, b);
  for (std::size_t i = 0; i < x.size(); ++i)
    if (x[i].dtype != y[i].dtype) return false;
  return true;
}

// The precision the reference space runs for `precision`: itself where some
// implementation there runs it, else the first of Op's with the same element
// types that one does (element types do not depend on the sizes: any shape
// tells them).
template <class Op, class Reference>
Precision reference_precision(Precision precision) {
  const ImplCatalog cat = Op::template catalog<Reference>();
  if (impl_runs(cat, "auto", precision)) return precision;
  for (Precision q : Op::precisions())
    if (same_element_types<Op>(Op::bad_input_shape(), precision, q) && impl_runs(cat, "auto", q))
      return q;
  return precision;
}

template <class Op, class Tested, class Reference>
void check_backends_agree(const ImplPrecision& ip) {
  const ImplCatalog ref_cat = Op::template catalog<Reference>();
  const Precision ref_precision = reference_precision<Op, Reference>(ip.precision);
  const std::string ref_impl = ip.impl == "auto" || impl_runs(ref_cat, ip.impl, ref_precision)
                                   ? ip.impl
                                   : std::string("auto");
  const bool bitwise = Op::same_bits_on_host_spaces && is_host_space<Tested> &&
                       is_host_space<Reference> && ref_impl == ip.impl &&
                       ref_precision == ip.precision;
  SCOPED_TRACE(std::string("against ") + Reference::name() + " " + ref_impl + " " +
               llmk::reference::precision_name(ref_precision));
  for (const typename Op::Shape& shape : variant_shapes<Op>(Op::shapes())) {
    SCOPED_TRACE(shape.name + (bitwise ? ", bitwise" : ", within the tolerances"));
    const typename Op::Problem p = Op::make(shape, 2024, ip.precision);
    const Outputs tested = outputs_on<Op, Tested>(p, ip.impl, ip.precision);
    const Outputs reference = outputs_on<Op, Reference>(p, ref_impl, ref_precision);
    const std::vector<ArgSpec> specs = Op::args(p.shape, p.precision);
    if (bitwise)
      EXPECT_TRUE(bitwise_equal(specs, tested, reference))
          << Tested::name() << " against " << Reference::name();
    else
      EXPECT_TRUE(close_to<Op>(p, tested, reference, ref_precision))
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

// The pairs of execution spaces this Kokkos has: OpenMP against Serial, Cuda
// against OpenMP.
template <class Op>
void register_backend_pairs() {
#if defined(KOKKOS_ENABLE_OPENMP) && defined(KOKKOS_ENABLE_SERIAL)
  register_backend_tests<Op, Kokkos::OpenMP, Kokkos::Serial>();
#endif
#if defined(KOKKOS_ENABLE_CUDA) && defined(KOKKOS_ENABLE_OPENMP)
  register_backend_tests<Op, Kokkos::Cuda, Kokkos::OpenMP>();
#endif
}

}  // namespace llmk_test::contract
