// The entry points: validate, reshape to rank 2, dispatch to an implementation.
// Explicit instantiations for every execution space Kokkos was built with.
#include <llmk/detail/problem.hpp>
#include <llmk/detail/validate.hpp>
#include <llmk/kernels/naive.hpp>
#include <llmk/kernels/team.hpp>
#include <llmk/kernels/tiled.hpp>
#include <llmk/matmul_backward.hpp>

#ifdef LLMK_HAVE_KOKKOSKERNELS
#include <kokkoskernels_impl.hpp>
#endif
#ifdef LLMK_HAVE_CUBLAS
#include <cublas_impl.hpp>
#endif

#include <stdexcept>
#include <string>

namespace llmk {
namespace {

using detail::Implementation;
using detail::Problem;

// Impl::Auto takes the first available of these. The vendor BLAS comes before
// tiled: on a 2-core Zen 3, OpenBLAS (through KokkosKernels) is ~1.4× faster
// than tiled at the seed shape; on an H200 cuBLAS is ~2× faster.
template <class ExecSpace>
constexpr Impl auto_preference[] = {Impl::Cublas, Impl::KokkosKernels, Impl::Tiled, Impl::Team};

template <class ExecSpace, Impl I>
constexpr bool available_v = Implementation<ExecSpace, I>::available;

template <class ExecSpace, Impl I>
void run_if_available(const ExecSpace& exec, const Problem<ExecSpace>& p,
                      const MatmulBackwardOptions& options) {
  if constexpr (available_v<ExecSpace, I>) {
    // Zero sizes are handled here, after the availability check, so that an
    // implementation missing on this space is an error whatever the sizes.
    if (p.M == 0 || p.OC == 0) return;  // every gradient is an empty sum
    if (p.C == 0) {                     // no products, but dbias still gets Σ dout
      if (p.has_bias()) kernels::bias_columns(exec, p.dbias, p.dout);
      return;
    }
    Implementation<ExecSpace, I>::run(exec, p, options);
  } else {
    throw std::invalid_argument("llmk::matmul_backward: implementation '" +
                                std::string(impl_name(I)) + "' is not available on backend '" +
                                backend_name<ExecSpace>() + "'");
  }
}

template <class ExecSpace>
void dispatch(const ExecSpace& exec, const Problem<ExecSpace>& p,
              const MatmulBackwardOptions& options) {
  const Impl impl = options.impl == Impl::Auto ? resolve_auto<ExecSpace>() : options.impl;
  switch (impl) {
    case Impl::Naive: return run_if_available<ExecSpace, Impl::Naive>(exec, p, options);
    case Impl::Team: return run_if_available<ExecSpace, Impl::Team>(exec, p, options);
    case Impl::Tiled: return run_if_available<ExecSpace, Impl::Tiled>(exec, p, options);
    case Impl::KokkosKernels:
      return run_if_available<ExecSpace, Impl::KokkosKernels>(exec, p, options);
    case Impl::Cublas: return run_if_available<ExecSpace, Impl::Cublas>(exec, p, options);
    case Impl::CublasLt: return run_if_available<ExecSpace, Impl::CublasLt>(exec, p, options);
    case Impl::Auto: break;
  }
  throw std::invalid_argument("llmk::matmul_backward: options.impl is not a valid llmk::Impl");
}

}  // namespace

template <class ExecSpace>
bool impl_available(Impl impl) {
  switch (impl) {
    case Impl::Auto: return true;
    case Impl::Naive: return available_v<ExecSpace, Impl::Naive>;
    case Impl::Team: return available_v<ExecSpace, Impl::Team>;
    case Impl::Tiled: return available_v<ExecSpace, Impl::Tiled>;
    case Impl::KokkosKernels: return available_v<ExecSpace, Impl::KokkosKernels>;
    case Impl::Cublas: return available_v<ExecSpace, Impl::Cublas>;
    case Impl::CublasLt: return available_v<ExecSpace, Impl::CublasLt>;
  }
  return false;
}

template <class ExecSpace>
Impl resolve_auto() {
  for (Impl impl : auto_preference<ExecSpace>)
    if (impl_available<ExecSpace>(impl)) return impl;
  return Impl::Naive;
}

template <class ExecSpace>
std::string backend_name() {
  return ExecSpace::name();
}

template <class ExecSpace>
void matmul_backward(const ExecSpace& exec, const Matrix<ExecSpace>& dinp,
                     const Matrix<ExecSpace>& dweight, const Vector<ExecSpace>& dbias,
                     const ConstMatrix<ExecSpace>& dout, const ConstMatrix<ExecSpace>& inp,
                     const ConstMatrix<ExecSpace>& weight, const MatmulBackwardOptions& options) {
  using detail::arg_info;
  const auto a_dout = arg_info("dout", dout, false);
  const auto a_weight = arg_info("weight", weight, false);
  const auto a_inp = arg_info("inp", inp, false);
  const auto a_dinp = arg_info("dinp", dinp, true);
  const auto a_dweight = arg_info("dweight", dweight, true);
  const auto a_dbias = arg_info("dbias", dbias, true);
  // dout fixes (M, OC); weight's rows must be OC and fix C.
  const index_t M = dout.extent(0), OC = dout.extent(1), C = weight.extent(1);
  detail::expect_extents(a_weight, {OC, C}, "(OC, C) with OC from dout's columns");
  detail::expect_extents(a_inp, {M, C}, "(M, C) with M from dout's rows and C from weight's columns");
  detail::expect_extents(a_dinp, {M, C}, "(M, C), the extents of inp");
  detail::expect_extents(a_dweight, {OC, C}, "(OC, C), the extents of weight");
  if (dbias.extent(0) != 0)
    detail::expect_extents(a_dbias, {OC}, "(OC) from dout's columns (or an empty view)");
  detail::check_storage({a_dinp, a_dweight, a_dbias, a_dout, a_inp, a_weight});
  detail::check_memory_space<ExecSpace>({a_dinp, a_dweight, a_dbias, a_dout, a_inp, a_weight});

  const Problem<ExecSpace> p{dinp, dweight, dbias, dout, inp, weight, M, C, OC};
  dispatch(exec, p, options);
}

template <class ExecSpace>
void matmul_backward(const ExecSpace& exec, const Tensor3<ExecSpace>& dinp,
                     const Matrix<ExecSpace>& dweight, const Vector<ExecSpace>& dbias,
                     const ConstTensor3<ExecSpace>& dout, const ConstTensor3<ExecSpace>& inp,
                     const ConstMatrix<ExecSpace>& weight, const MatmulBackwardOptions& options) {
  using detail::arg_info;
  const index_t B = dout.extent(0), T = dout.extent(1), C = inp.extent(2);
  detail::expect_extents(arg_info("inp", inp, false), {B, T, C},
                         "(B, T, C) with B, T from dout's first two extents");
  detail::expect_extents(arg_info("dinp", dinp, true), {B, T, C}, "(B, T, C), the extents of inp");
  detail::check_storage({arg_info("dinp", dinp, true), arg_info("dout", dout, false),
                         arg_info("inp", inp, false)});
  // Contiguous row-major B×T×X is the same memory as (B·T)×X.
  using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
  using Device = typename ExecSpace::device_type;
  const Kokkos::View<float**, Kokkos::LayoutRight, Device, Unmanaged> dinp2(dinp.data(), B * T, C);
  const Kokkos::View<const float**, Kokkos::LayoutRight, Device, Unmanaged> dout2(
      dout.data(), B * T, dout.extent(2));
  const Kokkos::View<const float**, Kokkos::LayoutRight, Device, Unmanaged> inp2(inp.data(), B * T, C);
  matmul_backward(exec, Matrix<ExecSpace>(dinp2), dweight, dbias, ConstMatrix<ExecSpace>(dout2),
                  ConstMatrix<ExecSpace>(inp2), weight, options);
}

template <class ExecSpace>
void matmul_backward(const ExecSpace& exec, float* dinp, float* dweight, float* dbias,
                     const float* dout, const float* inp, const float* weight, index_t B,
                     index_t T, index_t C, index_t OC, const MatmulBackwardOptions& options) {
  const std::pair<const char*, index_t> dims[] = {{"B", B}, {"T", T}, {"C", C}, {"OC", OC}};
  for (const auto& [name, value] : dims) {
    if (value < 0)
      throw std::invalid_argument(std::string("llmk::matmul_backward: dimension ") + name + " = " +
                                  std::to_string(value) + " is negative");
  }
  using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
  using Device = typename ExecSpace::device_type;
  using M2 = Kokkos::View<float**, Kokkos::LayoutRight, Device, Unmanaged>;
  using CM2 = Kokkos::View<const float**, Kokkos::LayoutRight, Device, Unmanaged>;
  const index_t M = B * T;
  // A null dbias means "no bias gradient", an empty view.
  const Kokkos::View<float*, Kokkos::LayoutRight, Device, Unmanaged> dbias1(dbias, dbias ? OC : 0);
  matmul_backward(exec, Matrix<ExecSpace>(M2(dinp, M, C)), Matrix<ExecSpace>(M2(dweight, OC, C)),
                  Vector<ExecSpace>(dbias1), ConstMatrix<ExecSpace>(CM2(dout, M, OC)),
                  ConstMatrix<ExecSpace>(CM2(inp, M, C)),
                  ConstMatrix<ExecSpace>(CM2(weight, OC, C)), options);
}

#define LLMK_INSTANTIATE(ExecSpace)                                                            \
  template bool impl_available<ExecSpace>(Impl);                                              \
  template Impl resolve_auto<ExecSpace>();                                                    \
  template std::string backend_name<ExecSpace>();                                             \
  template void matmul_backward<ExecSpace>(                                                   \
      const ExecSpace&, const Matrix<ExecSpace>&, const Matrix<ExecSpace>&,                   \
      const Vector<ExecSpace>&, const ConstMatrix<ExecSpace>&, const ConstMatrix<ExecSpace>&, \
      const ConstMatrix<ExecSpace>&, const MatmulBackwardOptions&);                           \
  template void matmul_backward<ExecSpace>(                                                   \
      const ExecSpace&, const Tensor3<ExecSpace>&, const Matrix<ExecSpace>&,                  \
      const Vector<ExecSpace>&, const ConstTensor3<ExecSpace>&, const ConstTensor3<ExecSpace>&, \
      const ConstMatrix<ExecSpace>&, const MatmulBackwardOptions&);                           \
  template void matmul_backward<ExecSpace>(const ExecSpace&, float*, float*, float*,          \
                                           const float*, const float*, const float*, index_t, \
                                           index_t, index_t, index_t, const MatmulBackwardOptions&);

#ifdef KOKKOS_ENABLE_SERIAL
LLMK_INSTANTIATE(Kokkos::Serial)
#endif
#ifdef KOKKOS_ENABLE_OPENMP
LLMK_INSTANTIATE(Kokkos::OpenMP)
#endif
#ifdef KOKKOS_ENABLE_CUDA
LLMK_INSTANTIATE(Kokkos::Cuda)
#endif

}  // namespace llmk
