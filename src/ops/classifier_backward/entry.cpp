// The entry points of the classifier backward: validate and flatten the
// arguments, then hand over to the shared framework (core/op/): precision
// matching (precisions.hpp), the implementation (op.hpp's list), the call with
// its context and chunks, and the queries; the targets' check runs inside the
// call, after everything else that can fail and before the first write.
// Explicit instantiations for every space.
#include <core/op/queries.hpp>
#include <core/spaces.hpp>
#include <core/validate.hpp>
#include <ops/classifier_backward/op.hpp>

#include <array>
#include <stdexcept>
#include <string>

namespace llmk {
namespace {

using namespace op::classifier_backward;

// The arguments of a call after the shape checks: logits (M, Vp), the
// per-position arrays (M), element types not yet matched.
template <class ExecSpace>
struct Operands {
  TensorRef<ExecSpace> dlogits, losses;
  ConstTensorRef<ExecSpace> logits, dloss;
  const std::int32_t* targets = nullptr;
  float dloss_value = 1.0f;
  index_t M = 0, V = 0, Vp = 0;
  detail::Arguments args;  // as checked: the user workspace must overlap none
};

template <class ExecSpace>
detail::ArgInfo targets_info(const TargetsRef<ExecSpace>& t) {
  return {"targets",      t.data(),     std::size_t(t.size()) * sizeof(std::int32_t),
          t.rank(),       {t.extent(0), t.rank() > 1 ? t.extent(1) : 0, 0, 0},
          t.contiguous(), false};
}

void expect_float(const char* name, const DType t) {
  if (t == DType::f32) return;
  throw std::invalid_argument(std::string(kOpName) + ": argument '" + name + "' is " +
                              dtype_name(t) + " but float32 was expected (in every precision)");
}

template <class ExecSpace>
Operands<ExecSpace> validated(const Out<ExecSpace>& dlogits, const Out<ExecSpace>& losses,
                              const In<ExecSpace>& logits, const TargetsRef<ExecSpace>& targets,
                              const DlossRef<ExecSpace>& dloss, const index_t V) {
  using detail::arg_info;
  using detail::expect_extents;
  const auto a_logits = arg_info("logits", logits, false);
  if (logits.rank() != 2 && logits.rank() != 3) {
    throw std::invalid_argument(std::string(kOpName) + ": argument 'logits' has extents " +
                                detail::extents_string(a_logits) +
                                " but rank 2 (M, Vp) or rank 3 (B, T, Vp) was expected");
  }
  // logits fix the rows and Vp.
  const bool rank3 = logits.rank() == 3;
  const index_t B = logits.extent(0), T = rank3 ? logits.extent(1) : 1;
  const index_t Vp = logits.extent(logits.rank() - 1), M = B * T;
  // A pointer for dloss: M floats, as the targets.
  const ConstTensorRef<ExecSpace> dloss_array =
      dloss.pointer ? (rank3 ? ConstTensorRef<ExecSpace>({dloss.pointer, DType::f32}, {B, T})
                             : ConstTensorRef<ExecSpace>({dloss.pointer, DType::f32}, {M}))
                    : dloss.per_position;
  const auto a_dlogits = arg_info("dlogits", dlogits, true);
  const auto a_losses = arg_info("losses", losses, true);
  const auto a_dloss = arg_info("dloss", dloss_array, false);
  const auto a_targets = targets_info(targets);
  if (rank3) {
    expect_extents(kOpName, a_dlogits, {B, T, Vp}, "(B, T, Vp), the extents of logits");
    expect_extents(kOpName, a_targets, {B, T}, "(B, T) from logits' extents");
    if (losses.size() != 0)
      expect_extents(kOpName, a_losses, {B, T}, "(B, T) from logits' extents (or an empty view)");
    if (dloss.is_array())
      expect_extents(kOpName, a_dloss, {B, T}, "(B, T) from logits' extents");
  } else {
    expect_extents(kOpName, a_dlogits, {M, Vp}, "(M, Vp), the extents of logits");
    expect_extents(kOpName, a_targets, {M}, "(M) from logits' rows");
    if (losses.size() != 0)
      expect_extents(kOpName, a_losses, {M}, "(M) from logits' rows (or an empty view)");
    if (dloss.is_array()) expect_extents(kOpName, a_dloss, {M}, "(M) from logits' rows");
  }
  if (V < 0 || V > Vp || (V == 0 && M > 0)) {
    throw std::invalid_argument(std::string(kOpName) + ": V = " + std::to_string(V) +
                                " but the vocabulary must have 1 to Vp = " + std::to_string(Vp) +
                                " columns (logits' last extent)");
  }
  if (losses.size() != 0) expect_float("losses", losses.dtype());
  if (dloss.is_array()) expect_float("dloss", dloss_array.dtype());
  // In place: dlogits is the logits' own array, checked once (as the output).
  const bool in_place = dlogits.data() == logits.data() && dlogits.size() == logits.size();
  const auto& a_first = in_place ? a_dlogits : a_logits;
  const auto args = {a_first, a_dlogits, a_losses, a_targets, a_dloss};
  if (in_place) {
    detail::check_storage(kOpName, {a_dlogits, a_losses, a_targets, a_dloss});
  } else {
    detail::check_storage(kOpName, args);
  }
  detail::check_memory_space<ExecSpace>(kOpName, args);
  if (in_place && dlogits.dtype() != logits.dtype()) {
    throw std::invalid_argument(std::string(kOpName) +
                                ": dlogits is logits' own array but of another element type");
  }
  Operands<ExecSpace> o;
  o.args = args;
  o.dlogits = core::op::flattened(dlogits, M, Vp);
  o.logits = core::op::flattened(logits, M, Vp);
  // An empty losses view (no elements, whatever its rank and pointer) is
  // "not computed": without this, flattened() gave it M elements, written
  // through its pointer (found by the contract tests' absent output).
  o.losses = losses.size() != 0 ? core::op::flattened(losses, M) : TensorRef<ExecSpace>();
  o.dloss = core::op::flattened(dloss_array, M);
  o.targets = targets.data();
  o.dloss_value = dloss.value;
  o.M = M, o.V = V, o.Vp = Vp;
  return o;
}

// The call's element type in each role of a configuration (Precision::roles()).
template <class ExecSpace>
std::array<core::op::RoleType, 2> role_types(const Operands<ExecSpace>& o) {
  return {{{"logits", o.logits.dtype()}, {"dlogits", o.dlogits.dtype()}}};
}

template <class ExecSpace, class P>
Problem<ExecSpace, P> typed_problem(const Operands<ExecSpace>& o) {
  using core::op::typed_matrix;
  using core::op::typed_vector;
  using T = typename P::in;
  Problem<ExecSpace, P> p;
  auto& a = p.args;
  a.dlogits = typed_matrix<T>(o.dlogits, o.M, o.Vp);
  a.logits = typed_matrix<T>(o.logits, o.M, o.Vp);
  a.losses = typed_vector<float>(o.losses);
  a.targets = core::op::UnmanagedVector<const std::int32_t, ExecSpace>(o.targets, o.M);
  a.dloss = typed_vector<float>(o.dloss);
  a.dloss_value = o.dloss_value;
  a.V = int(o.V);  // ≤ Vp, which the implementations' max_cols bound
  p.M = o.M, p.Vp = o.Vp;
  return p;
}

// Refuses targets outside [0, V): a reduction over them on the call's space,
// whose count the host waits for.
template <class ExecSpace>
void check_targets(const ExecSpace& exec, const ConstVector<ExecSpace, std::int32_t>& targets,
                   const int V) {
  const index_t bad = kernels::count_bad_targets(exec, targets, V);
  if (bad == 0) return;
  const index_t first = kernels::first_bad_target(exec, targets, V);
  Kokkos::View<std::int32_t, Kokkos::HostSpace> value("llmk::classifier_bad_target");
  Kokkos::deep_copy(exec, value, Kokkos::subview(targets, first));
  exec.fence();
  throw std::invalid_argument(std::string(kOpName) + ": argument 'targets' holds " +
                              std::to_string(bad) + " value(s) outside [0, V = " +
                              std::to_string(V) + "), the first at position " +
                              std::to_string(first) + " (" + std::to_string(value()) +
                              "); nothing was written");
}

template <class ExecSpace>
void dispatch(Context<ExecSpace>& ctx, const Operands<ExecSpace>& o,
              const ClassifierBackwardOptions& options) {
  core::op::with_matching_precision<Precisions>(kOpName, role_types(o), [&](auto ptag) {
    using P = typename decltype(ptag)::type;
    const Problem<ExecSpace, P> p = typed_problem<ExecSpace, P>(o);
    core::op::with_impl<Op, ExecSpace, P>(options.impl, Math::fp32, p.sizes(), [&](auto tag) {
      using I = typename decltype(tag)::type;
      core::op::check_limits<Op, I>(p.sizes());
      core::op::with_call(Op::name, ctx.state(), core::op::workspace_of<Op, I, ExecSpace, P>(p.sizes()),
                          o.args, options, [&](Call<ExecSpace>& call) {
                            if (options.check_targets)
                              check_targets(call.exec, p.args.targets, p.args.V);
                            core::op::run_chunked<Op, I>(call, p);
                          });
    });
  });
}

}  // namespace

// --- what the list says -------------------------------------------------------

const std::vector<ClassifierBackwardImplInfo>& classifier_backward_impls() {
  static const std::vector<ClassifierBackwardImplInfo> infos = core::op::impl_infos<Op>();
  return infos;
}

const std::vector<std::string>& classifier_backward_precisions() {
  static const std::vector<std::string> names = core::op::precision_list<Op>();
  return names;
}

template <class ExecSpace>
bool classifier_backward_available(std::string_view impl) {
  return core::op::available<Op, ExecSpace>(impl);
}

template <class ExecSpace>
std::string classifier_backward_auto_impl(std::string_view precision) {
  return core::op::auto_impl<Op, ExecSpace>(precision, Math::fp32);
}

template <class ExecSpace>
std::size_t classifier_backward_workspace_bytes(index_t M, index_t V, index_t Vp,
                                                const ClassifierBackwardOptions& options,
                                                std::string_view precision) {
  return core::op::workspace_bytes<Op, ExecSpace>(Sizes{M, V, Vp}, options.impl, Math::fp32,
                                                  precision);
}

// --- the entry points ---------------------------------------------------------

template <class ExecSpace>
void classifier_backward(Context<ExecSpace>& ctx, const Out<ExecSpace>& dlogits,
                         const Out<ExecSpace>& losses, const In<ExecSpace>& logits,
                         const Targets<ExecSpace>& targets, const Dloss<ExecSpace>& dloss,
                         index_t V, const ClassifierBackwardOptions& options) {
  dispatch(ctx, validated<ExecSpace>(dlogits, losses, logits, targets, dloss, V), options);
}

template <class ExecSpace>
void classifier_backward(Context<ExecSpace>& ctx, BufferRef dlogits, float* losses,
                         ConstBufferRef logits, const std::int32_t* targets,
                         const Dloss<ExecSpace>& dloss, index_t B, index_t T, index_t V,
                         index_t Vp, const ClassifierBackwardOptions& options) {
  core::op::check_dimensions(kOpName, {{"B", B}, {"T", T}, {"V", V}, {"Vp", Vp}});
  // Every array's element count, checked before any reference is made of it.
  const index_t M = core::checked_product(B, T, kOpName, "M = B·T");
  core::checked_product(M, Vp, kOpName, "the elements of logits and dlogits, M·Vp");
  classifier_backward(ctx, Out<ExecSpace>(dlogits, {M, Vp}),
                      losses ? Out<ExecSpace>(losses, {M}) : Out<ExecSpace>(),
                      In<ExecSpace>(logits, {M, Vp}), TargetsRef<ExecSpace>(targets, {M}), dloss,
                      V, options);
}

template <class ExecSpace>
void classifier_backward(const ExecSpace& exec, const Out<ExecSpace>& dlogits,
                         const Out<ExecSpace>& losses, const In<ExecSpace>& logits,
                         const Targets<ExecSpace>& targets, const Dloss<ExecSpace>& dloss,
                         index_t V, const ClassifierBackwardOptions& options) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  classifier_backward(ctx, dlogits, losses, logits, targets, dloss, V, options);
}

template <class ExecSpace>
void classifier_backward(const ExecSpace& exec, BufferRef dlogits, float* losses,
                         ConstBufferRef logits, const std::int32_t* targets,
                         const Dloss<ExecSpace>& dloss, index_t B, index_t T, index_t V,
                         index_t Vp, const ClassifierBackwardOptions& options) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  classifier_backward(ctx, dlogits, losses, logits, targets, dloss, B, T, V, Vp, options);
}

#define LLMK_INSTANTIATE_CLASSIFIER_BACKWARD(Space)                                            \
  template bool classifier_backward_available<Space>(std::string_view);                       \
  template std::string classifier_backward_auto_impl<Space>(std::string_view);                \
  template std::size_t classifier_backward_workspace_bytes<Space>(                            \
      index_t, index_t, index_t, const ClassifierBackwardOptions&, std::string_view);          \
  template void classifier_backward<Space>(Context<Space>&, const Out<Space>&, const Out<Space>&, \
                                           const In<Space>&, const Targets<Space>&,            \
                                           const Dloss<Space>&, index_t,                       \
                                           const ClassifierBackwardOptions&);                  \
  template void classifier_backward<Space>(Context<Space>&, BufferRef, float*, ConstBufferRef, \
                                           const std::int32_t*, const Dloss<Space>&, index_t,  \
                                           index_t, index_t, index_t,                          \
                                           const ClassifierBackwardOptions&);                  \
  template void classifier_backward<Space>(const Space&, const Out<Space>&, const Out<Space>&, \
                                           const In<Space>&, const Targets<Space>&,            \
                                           const Dloss<Space>&, index_t,                       \
                                           const ClassifierBackwardOptions&);                  \
  template void classifier_backward<Space>(const Space&, BufferRef, float*, ConstBufferRef,    \
                                           const std::int32_t*, const Dloss<Space>&, index_t,  \
                                           index_t, index_t, index_t,                          \
                                           const ClassifierBackwardOptions&);
LLMK_FOR_EACH_SPACE(LLMK_INSTANTIATE_CLASSIFIER_BACKWARD)

}  // namespace llmk
