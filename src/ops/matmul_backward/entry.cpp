// The entry points: validate, reshape to rank 2, resolve the implementation
// from the list (implementations.hpp), acquire what the call needs, then run
// it over chunks of rows. Explicit instantiations for every space (spaces.hpp).
#include <core/spaces.hpp>
#include <core/validate.hpp>
#include <ops/matmul_backward/implementations.hpp>

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <string>

namespace llmk {
namespace {

using namespace op::matmul_backward;

std::string valid_names() {
  std::string valid = "auto";
  core::for_each_impl(Implementations{}, [&](auto tag) {
    valid += ", " + std::string(decltype(tag)::type::name);
  });
  return valid;
}

[[noreturn]] void throw_unknown(std::string_view impl) {
  throw std::invalid_argument(std::string(kOpName) + ": options.impl = '" + std::string(impl) +
                              "' is not an implementation (expected one of: " + valid_names() +
                              ")");
}

template <class ExecSpace>
std::string_view resolve_name(std::string_view impl) {
  if (impl != "auto") return impl;
  std::string_view first;
  core::for_each_impl(Implementations{}, [&](auto tag) {
    using I = typename decltype(tag)::type;
    if (first.empty() && available_on<I, ExecSpace>) first = I::name;
  });
  return first;  // naive is available everywhere
}

// The sizes I refuses: C or OC above max_cols, a weight above
// max_operand_elements.
template <class I>
void check_limits(index_t C, index_t OC) {
  const auto refuse = [](const std::string& what, index_t value, index_t limit) {
    throw std::invalid_argument(std::string(kOpName) + ": " + what + " = " +
                                std::to_string(value) + " exceeds " + std::to_string(limit) +
                                ", the most implementation '" + std::string(I::name) +
                                "' supports");
  };
  for (const auto& [name, value] : {std::pair<const char*, index_t>{"C", C}, {"OC", OC}})
    if (value > I::max_cols) refuse(name, value, I::max_cols);
  if (OC * C > I::max_operand_elements)
    refuse("OC·C (weight's elements)", OC * C, I::max_operand_elements);
}

// The rows one run() of I takes: at most max_rows, and few enough that dout
// (rows × OC) and inp (rows × C) stay within max_operand_elements.
template <class I>
index_t rows_per_run(index_t C, index_t OC) {
  const index_t widest = std::max<index_t>({C, OC, 1});
  return std::max<index_t>(1, std::min(I::max_rows, I::max_operand_elements / widest));
}

// What a call of these sizes takes: one run() on the largest chunk of rows
// (the chunks reuse it in turn), or the lone dbias pass when C = 0.
template <class I, class ExecSpace>
std::size_t workspace_of(const Sizes& s) {
  core::WorkspaceSize size;
  if (s.M == 0 || s.OC == 0) return 0;
  if (s.C == 0) {
    if (s.bias) add_bias_pass_workspace<ExecSpace>(size, BiasPass::ColumnSums, s.M, s.OC);
  } else {
    const index_t rows = std::min(s.M, rows_per_run<I>(s.C, s.OC));
    I::template workspace<ExecSpace>(size, {rows, s.C, s.OC, s.bias});
  }
  return size.bytes();
}

// Runs f(call) with everything a call needs acquired first, in the order that
// lets a call fail before its first write: Kokkos can launch from here; the
// locks (the context's; with Kokkos 3's host spaces, the space's); the
// workspace (allocated now if the context holds less).
template <class ExecSpace, class F>
void with_call(detail::ContextState<ExecSpace>& ctx, std::size_t workspace_bytes,
               const MatmulBackwardOptions& options, F&& f) {
  const char* why = nullptr;
  if (!compat::can_launch_here<ExecSpace>(why))
    throw std::runtime_error(std::string(kOpName) + " on " + ExecSpace::name() +
                             " cannot run: " + why);
  std::unique_lock<std::mutex> shared_lock;
  if constexpr (compat::instances_share_state<ExecSpace>)
    shared_lock = std::unique_lock<std::mutex>(detail::shared_state_mutex<ExecSpace>());
  const std::lock_guard<std::mutex> lock(ctx.mutex());
  core::Workspace workspace = ctx.workspace(workspace_bytes);
  Call<ExecSpace> call{ctx.exec(), ctx, workspace, options};
  f(call);
}

template <class I, class ExecSpace>
void run_impl(detail::ContextState<ExecSpace>& ctx, const Problem<ExecSpace>& p,
              const MatmulBackwardOptions& options) {
  check_limits<I>(p.C, p.OC);
  with_call(ctx, workspace_of<I, ExecSpace>(p.sizes()), options, [&](Call<ExecSpace>& call) {
    if (p.M == 0 || p.OC == 0) return;  // every gradient is an empty sum
    if (p.C == 0) {                     // no products, but dbias still gets Σ dout
      if (p.has_bias()) run_bias_pass(BiasPass::ColumnSums, call, p.dbias, p.dout);
      return;
    }
    const core::Workspace whole = call.workspace;
    const index_t chunk = rows_per_run<I>(p.C, p.OC);
    for (index_t m0 = 0; m0 < p.M; m0 += chunk) {
      call.workspace = whole;  // each chunk carves the workspace afresh
      I::run(call, p.M <= chunk ? p : p.rows(m0, std::min(chunk, p.M - m0)));
    }
  });
}

template <class ExecSpace>
void dispatch(Context<ExecSpace>& ctx, const Problem<ExecSpace>& p,
              const MatmulBackwardOptions& options) {
  const std::string_view name = resolve_name<ExecSpace>(options.impl);
  const bool known = core::visit_impl(Implementations{}, name, [&](auto tag) {
    using I = typename decltype(tag)::type;
    if constexpr (available_on<I, ExecSpace>) {
      run_impl<I>(ctx.state(), p, options);
    } else {
      throw std::invalid_argument(
          std::string(kOpName) + ": implementation '" + std::string(name) +
          "' is not available on backend '" + ExecSpace::name() + "'" +
          (I::compiled ? "" : " (its library is not part of this build)"));
    }
  });
  if (!known) throw_unknown(options.impl);
}

// The rank-2 checks: extents, storage, memory space.
template <class ExecSpace>
Problem<ExecSpace> validated(const Matrix<ExecSpace>& dinp, const Matrix<ExecSpace>& dweight,
                             const Vector<ExecSpace>& dbias, const ConstMatrix<ExecSpace>& dout,
                             const ConstMatrix<ExecSpace>& inp,
                             const ConstMatrix<ExecSpace>& weight) {
  using detail::arg_info;
  const auto a_dout = arg_info("dout", dout, false);
  const auto a_weight = arg_info("weight", weight, false);
  const auto a_inp = arg_info("inp", inp, false);
  const auto a_dinp = arg_info("dinp", dinp, true);
  const auto a_dweight = arg_info("dweight", dweight, true);
  const auto a_dbias = arg_info("dbias", dbias, true);
  // dout fixes (M, OC); weight's rows must be OC and fix C.
  const index_t M = dout.extent(0), OC = dout.extent(1), C = weight.extent(1);
  detail::expect_extents(kOpName, a_weight, {OC, C}, "(OC, C) with OC from dout's columns");
  detail::expect_extents(kOpName, a_inp, {M, C},
                         "(M, C) with M from dout's rows and C from weight's columns");
  detail::expect_extents(kOpName, a_dinp, {M, C}, "(M, C), the extents of inp");
  detail::expect_extents(kOpName, a_dweight, {OC, C}, "(OC, C), the extents of weight");
  if (dbias.extent(0) != 0)
    detail::expect_extents(kOpName, a_dbias, {OC}, "(OC) from dout's columns (or an empty view)");
  detail::check_storage(kOpName, {a_dinp, a_dweight, a_dbias, a_dout, a_inp, a_weight});
  detail::check_memory_space<ExecSpace>(kOpName,
                                        {a_dinp, a_dweight, a_dbias, a_dout, a_inp, a_weight});
  return {dinp, dweight, dbias, dout, inp, weight, M, C, OC};
}

}  // namespace

// --- what the list says -------------------------------------------------------

const std::vector<MatmulBackwardImplInfo>& matmul_backward_impls() {
  static const std::vector<MatmulBackwardImplInfo> infos = [] {
    std::vector<MatmulBackwardImplInfo> v;
    core::for_each_impl(Implementations{}, [&](auto tag) {
      using I = typename decltype(tag)::type;
      v.push_back({std::string(I::name), I::compiled, I::deterministic,
                   std::string(bias_pass_name(I::bias))});
    });
    return v;
  }();
  return infos;
}

template <class ExecSpace>
bool matmul_backward_available(std::string_view impl) {
  bool available = false;
  const bool known = core::visit_impl(Implementations{}, resolve_name<ExecSpace>(impl), [&](auto tag) {
    available = available_on<typename decltype(tag)::type, ExecSpace>;
  });
  if (!known) throw_unknown(impl);
  return available;
}

template <class ExecSpace>
std::string matmul_backward_auto_impl() {
  return std::string(resolve_name<ExecSpace>("auto"));
}

template <class ExecSpace>
std::size_t matmul_backward_workspace_bytes(index_t M, index_t C, index_t OC, bool has_bias,
                                            const MatmulBackwardOptions& options) {
  const std::string_view name = resolve_name<ExecSpace>(options.impl);
  std::size_t bytes = 0;
  const bool known = core::visit_impl(Implementations{}, name, [&](auto tag) {
    using I = typename decltype(tag)::type;
    if constexpr (available_on<I, ExecSpace>) bytes = workspace_of<I, ExecSpace>({M, C, OC, has_bias});
  });
  if (!known) throw_unknown(options.impl);
  return bytes;
}

// --- the entry points ---------------------------------------------------------

template <class ExecSpace>
void matmul_backward(Context<ExecSpace>& ctx, const Matrix<ExecSpace>& dinp,
                     const Matrix<ExecSpace>& dweight, const Vector<ExecSpace>& dbias,
                     const ConstMatrix<ExecSpace>& dout, const ConstMatrix<ExecSpace>& inp,
                     const ConstMatrix<ExecSpace>& weight, const MatmulBackwardOptions& options) {
  dispatch(ctx, validated<ExecSpace>(dinp, dweight, dbias, dout, inp, weight), options);
}

template <class ExecSpace>
void matmul_backward(Context<ExecSpace>& ctx, const Tensor3<ExecSpace>& dinp,
                     const Matrix<ExecSpace>& dweight, const Vector<ExecSpace>& dbias,
                     const ConstTensor3<ExecSpace>& dout, const ConstTensor3<ExecSpace>& inp,
                     const ConstMatrix<ExecSpace>& weight, const MatmulBackwardOptions& options) {
  using detail::arg_info;
  const index_t B = dout.extent(0), T = dout.extent(1), C = inp.extent(2);
  detail::expect_extents(kOpName, arg_info("inp", inp, false), {B, T, C},
                         "(B, T, C) with B, T from dout's first two extents");
  detail::expect_extents(kOpName, arg_info("dinp", dinp, true), {B, T, C},
                         "(B, T, C), the extents of inp");
  detail::check_storage(kOpName, {arg_info("dinp", dinp, true), arg_info("dout", dout, false),
                                  arg_info("inp", inp, false)});
  // Contiguous row-major B×T×X is the same memory as (B·T)×X.
  using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
  using Device = typename ExecSpace::device_type;
  const Kokkos::View<float**, Kokkos::LayoutRight, Device, Unmanaged> dinp2(dinp.data(), B * T, C);
  const Kokkos::View<const float**, Kokkos::LayoutRight, Device, Unmanaged> dout2(
      dout.data(), B * T, dout.extent(2));
  const Kokkos::View<const float**, Kokkos::LayoutRight, Device, Unmanaged> inp2(inp.data(), B * T, C);
  matmul_backward(ctx, Matrix<ExecSpace>(dinp2), dweight, dbias, ConstMatrix<ExecSpace>(dout2),
                  ConstMatrix<ExecSpace>(inp2), weight, options);
}

template <class ExecSpace>
void matmul_backward(Context<ExecSpace>& ctx, float* dinp, float* dweight, float* dbias,
                     const float* dout, const float* inp, const float* weight, index_t B,
                     index_t T, index_t C, index_t OC, const MatmulBackwardOptions& options) {
  const std::pair<const char*, index_t> dims[] = {{"B", B}, {"T", T}, {"C", C}, {"OC", OC}};
  for (const auto& [name, value] : dims) {
    if (value < 0)
      throw std::invalid_argument(std::string(kOpName) + ": dimension " + name + " = " +
                                  std::to_string(value) + " is negative");
  }
  // Every array's element count, checked before any view is made of it.
  const index_t M = core::checked_product(B, T, kOpName, "M = B·T");
  core::checked_product(M, C, kOpName, "the elements of inp and dinp, M·C");
  core::checked_product(M, OC, kOpName, "the elements of dout, M·OC");
  core::checked_product(OC, C, kOpName, "the elements of weight and dweight, OC·C");
  using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
  using Device = typename ExecSpace::device_type;
  using M2 = Kokkos::View<float**, Kokkos::LayoutRight, Device, Unmanaged>;
  using CM2 = Kokkos::View<const float**, Kokkos::LayoutRight, Device, Unmanaged>;
  // A null dbias means "no bias gradient", an empty view.
  const Kokkos::View<float*, Kokkos::LayoutRight, Device, Unmanaged> dbias1(dbias, dbias ? OC : 0);
  matmul_backward(ctx, Matrix<ExecSpace>(M2(dinp, M, C)), Matrix<ExecSpace>(M2(dweight, OC, C)),
                  Vector<ExecSpace>(dbias1), ConstMatrix<ExecSpace>(CM2(dout, M, OC)),
                  ConstMatrix<ExecSpace>(CM2(inp, M, C)),
                  ConstMatrix<ExecSpace>(CM2(weight, OC, C)), options);
}

template <class ExecSpace>
void matmul_backward(const ExecSpace& exec, const Matrix<ExecSpace>& dinp,
                     const Matrix<ExecSpace>& dweight, const Vector<ExecSpace>& dbias,
                     const ConstMatrix<ExecSpace>& dout, const ConstMatrix<ExecSpace>& inp,
                     const ConstMatrix<ExecSpace>& weight, const MatmulBackwardOptions& options) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  matmul_backward(ctx, dinp, dweight, dbias, dout, inp, weight, options);
}

template <class ExecSpace>
void matmul_backward(const ExecSpace& exec, const Tensor3<ExecSpace>& dinp,
                     const Matrix<ExecSpace>& dweight, const Vector<ExecSpace>& dbias,
                     const ConstTensor3<ExecSpace>& dout, const ConstTensor3<ExecSpace>& inp,
                     const ConstMatrix<ExecSpace>& weight, const MatmulBackwardOptions& options) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  matmul_backward(ctx, dinp, dweight, dbias, dout, inp, weight, options);
}

template <class ExecSpace>
void matmul_backward(const ExecSpace& exec, float* dinp, float* dweight, float* dbias,
                     const float* dout, const float* inp, const float* weight, index_t B,
                     index_t T, index_t C, index_t OC, const MatmulBackwardOptions& options) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  matmul_backward(ctx, dinp, dweight, dbias, dout, inp, weight, B, T, C, OC, options);
}

template <class ExecSpace>
void matmul_backward_bias_pass(Context<ExecSpace>& ctx, const Vector<ExecSpace>& dbias,
                               const ConstMatrix<ExecSpace>& dout, std::string_view impl) {
  const std::string_view name = resolve_name<ExecSpace>(impl);
  const bool known = core::visit_impl(Implementations{}, name, [&](auto tag) {
    using I = typename decltype(tag)::type;
    if constexpr (available_on<I, ExecSpace> && I::bias != BiasPass::Fused) {
      const index_t M = dout.extent(0), OC = dout.extent(1);
      detail::expect_extents(kOpName, detail::arg_info("dbias", dbias, true), {OC},
                             "(OC) from dout's columns");
      core::WorkspaceSize size;
      add_bias_pass_workspace<ExecSpace>(size, I::bias, M, OC);
      with_call(ctx.state(), size.bytes(), MatmulBackwardOptions{}, [&](Call<ExecSpace>& call) {
        if (M > 0 && OC > 0) run_bias_pass(I::bias, call, dbias, dout);
      });
    } else {
      throw std::invalid_argument(std::string(kOpName) + "_bias_pass: implementation '" +
                                  std::string(name) + "' " +
                                  (available_on<I, ExecSpace> ? "fuses dbias into a GEMM"
                                                              : "is not available here"));
    }
  });
  if (!known) throw_unknown(impl);
}

#define LLMK_INSTANTIATE_MATMUL_BACKWARD(Space)                                                 \
  template bool matmul_backward_available<Space>(std::string_view);                            \
  template std::string matmul_backward_auto_impl<Space>();                                      \
  template std::size_t matmul_backward_workspace_bytes<Space>(index_t, index_t, index_t, bool,  \
                                                              const MatmulBackwardOptions&);    \
  template void matmul_backward<Space>(Context<Space>&, const Matrix<Space>&,                   \
                                       const Matrix<Space>&, const Vector<Space>&,              \
                                       const ConstMatrix<Space>&, const ConstMatrix<Space>&,    \
                                       const ConstMatrix<Space>&, const MatmulBackwardOptions&); \
  template void matmul_backward<Space>(Context<Space>&, const Tensor3<Space>&,                  \
                                       const Matrix<Space>&, const Vector<Space>&,              \
                                       const ConstTensor3<Space>&, const ConstTensor3<Space>&,  \
                                       const ConstMatrix<Space>&, const MatmulBackwardOptions&); \
  template void matmul_backward<Space>(Context<Space>&, float*, float*, float*, const float*,   \
                                       const float*, const float*, index_t, index_t, index_t,   \
                                       index_t, const MatmulBackwardOptions&);                  \
  template void matmul_backward<Space>(const Space&, const Matrix<Space>&, const Matrix<Space>&, \
                                       const Vector<Space>&, const ConstMatrix<Space>&,         \
                                       const ConstMatrix<Space>&, const ConstMatrix<Space>&,    \
                                       const MatmulBackwardOptions&);                           \
  template void matmul_backward<Space>(const Space&, const Tensor3<Space>&,                     \
                                       const Matrix<Space>&, const Vector<Space>&,              \
                                       const ConstTensor3<Space>&, const ConstTensor3<Space>&,  \
                                       const ConstMatrix<Space>&, const MatmulBackwardOptions&); \
  template void matmul_backward<Space>(const Space&, float*, float*, float*, const float*,      \
                                       const float*, const float*, index_t, index_t, index_t,   \
                                       index_t, const MatmulBackwardOptions&);                  \
  template void matmul_backward_bias_pass<Space>(Context<Space>&, const Vector<Space>&,         \
                                                 const ConstMatrix<Space>&, std::string_view);
LLMK_FOR_EACH_SPACE(LLMK_INSTANTIATE_MATMUL_BACKWARD)

}  // namespace llmk
