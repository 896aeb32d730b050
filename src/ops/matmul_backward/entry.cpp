// The entry points: validate, reshape to rank 2, match the element types to a
// precision configuration (precisions.hpp), choose the implementation
// (select.hpp), acquire what the call needs, then run it over chunks of rows.
// Explicit instantiations for every space (spaces.hpp).
#include <core/spaces.hpp>
#include <core/validate.hpp>
#include <ops/matmul_backward/select.hpp>

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <string>

namespace llmk {
namespace {

using namespace op::matmul_backward;

// The arguments of a call after the shape checks, all of rank 2 (an absent
// dbias or pre_gelu has rank 0), element types not yet matched.
template <class ExecSpace>
struct Operands {
  TensorRef<ExecSpace> dinp, dweight, dbias;
  ConstTensorRef<ExecSpace> dout, inp, weight, pre_gelu;
  index_t M = 0, C = 0, OC = 0;
};

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

// What a call of these sizes takes: the most one run() takes on a chunk of
// rows (the chunks reuse it in turn; all are the first's size but the last,
// and a smaller chunk may take more: split-K splits fewer tiles further), or
// the lone dbias pass when C = 0.
template <class I, class ExecSpace, class P>
std::size_t workspace_of(const Sizes& s) {
  if (s.M == 0 || s.OC == 0) return 0;
  if (s.C == 0) {
    core::WorkspaceSize size;
    if (s.bias) add_bias_pass_workspace<ExecSpace>(size, BiasPass::ColumnSums, s.M, s.OC);
    return size.bytes();
  }
  const index_t per_run = rows_per_run<I>(s.C, s.OC);
  auto of_chunk = [&](const index_t rows) {
    core::WorkspaceSize size;
    Sizes chunk = s;
    chunk.M = rows;
    I::template workspace<ExecSpace, P>(size, chunk);
    return size.bytes();
  };
  const std::size_t first = of_chunk(std::min(s.M, per_run));
  return s.M > per_run && s.M % per_run != 0 ? std::max(first, of_chunk(s.M % per_run)) : first;
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

template <class ExecSpace, class View>
void fill_zero(const ExecSpace& exec, const View& v) {
  Kokkos::deep_copy(exec, v, typename View::non_const_value_type(0.0f));
}

// A problem with no products (M, C or OC zero): its sums are empty, except
// dbias's when only C is zero; an overwritten gradient is set to zeros.
template <class ExecSpace, class P>
void run_without_products(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
  if (p.overwrite_dinp) fill_zero(call.exec, p.dinp);
  if (p.overwrite_dweight) fill_zero(call.exec, p.dweight);
  if (!p.has_bias()) return;
  if (p.M > 0 && p.OC > 0) {
    run_bias_pass(BiasPass::ColumnSums, call, p);
  } else if (p.overwrite_dbias) {
    fill_zero(call.exec, p.dbias);
  }
}

template <class I, class ExecSpace, class P>
void run_impl(detail::ContextState<ExecSpace>& ctx, const Problem<ExecSpace, P>& p,
              const MatmulBackwardOptions& options) {
  check_limits<I>(p.C, p.OC);
  with_call(ctx, workspace_of<I, ExecSpace, P>(p.sizes()), options, [&](Call<ExecSpace>& call) {
    if (p.M == 0 || p.OC == 0 || p.C == 0) return run_without_products(call, p);
    const core::Workspace whole = call.workspace;
    const index_t chunk = rows_per_run<I>(p.C, p.OC);
    for (index_t m0 = 0; m0 < p.M; m0 += chunk) {
      call.workspace = whole;  // each chunk carves the workspace afresh
      I::run(call, p.M <= chunk ? p : p.rows(m0, std::min(chunk, p.M - m0)));
    }
  });
}

// --- element types ------------------------------------------------------------

template <class P>
std::string describe_precision() {
  return std::string(P::name) + " (inputs " + dtype_name(dtype_of<typename P::in>()) +
         ", dinp " + dtype_name(dtype_of<typename P::dinp>()) + ", dweight " +
         dtype_name(dtype_of<typename P::dweight>()) + ", dbias " +
         dtype_name(dtype_of<typename P::dbias>()) + ")";
}

// Whether a reference's type fits T; one without elements fits any.
template <class T, class Ref>
bool fits(const Ref& r) {
  return r.size() == 0 || r.dtype() == dtype_of<T>();
}

template <class P, class ExecSpace>
bool matches(const Operands<ExecSpace>& o) {
  return o.dout.dtype() == dtype_of<typename P::in>() && fits<typename P::dinp>(o.dinp) &&
         fits<typename P::dweight>(o.dweight) && fits<typename P::dbias>(o.dbias);
}

// The inputs share dout's element type.
template <class ExecSpace>
void check_input_types(const Operands<ExecSpace>& o) {
  const std::pair<const char*, const ConstTensorRef<ExecSpace>*> inputs[] = {
      {"inp", &o.inp}, {"weight", &o.weight}, {"pre_gelu", &o.pre_gelu}};
  for (const auto& [name, ref] : inputs) {
    if (ref->size() == 0 || ref->dtype() == o.dout.dtype()) continue;
    throw std::invalid_argument(std::string(kOpName) + ": argument '" + name + "' is " +
                                dtype_name(ref->dtype()) + " but dout is " +
                                dtype_name(o.dout.dtype()) +
                                "; the inputs (dout, inp, weight, pre_gelu) share one element type");
  }
}

[[noreturn]] void throw_no_precision(const std::string& types) {
  std::string expected;
  for_each_precision(Precisions{}, [&](auto tag) {
    expected += (expected.empty() ? "" : "; ") + describe_precision<typename decltype(tag)::type>();
  });
  throw std::invalid_argument(std::string(kOpName) + ": the element types (" + types +
                              ") are not a precision configuration llmk runs; expected one of: " +
                              expected);
}

template <class T, class ExecSpace>
Matrix<ExecSpace, T> typed_matrix(void* data, index_t rows, index_t cols) {
  using Unmanaged = Kokkos::View<T**, Kokkos::LayoutRight, typename ExecSpace::device_type,
                                 Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  return Unmanaged(static_cast<T*>(data), rows, cols);
}
template <class T, class ExecSpace>
ConstMatrix<ExecSpace, T> typed_matrix(const void* data, index_t rows, index_t cols) {
  using Unmanaged = Kokkos::View<const T**, Kokkos::LayoutRight, typename ExecSpace::device_type,
                                 Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  return Unmanaged(static_cast<const T*>(data), rows, cols);
}

template <class ExecSpace, class P>
Problem<ExecSpace, P> typed_problem(const Operands<ExecSpace>& o,
                                    const MatmulBackwardOptions& options) {
  using In = typename P::in;
  using DBiasUnmanaged = Kokkos::View<typename P::dbias*, Kokkos::LayoutRight,
                                      typename ExecSpace::device_type,
                                      Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const index_t M = o.M, C = o.C, OC = o.OC;
  Problem<ExecSpace, P> p;
  p.dinp = typed_matrix<typename P::dinp, ExecSpace>(o.dinp.data(), M, C);
  p.dweight = typed_matrix<typename P::dweight, ExecSpace>(o.dweight.data(), OC, C);
  p.dbias = DBiasUnmanaged(static_cast<typename P::dbias*>(o.dbias.data()), o.dbias.size());
  p.dout = typed_matrix<In, ExecSpace>(o.dout.data(), M, OC);
  p.inp = typed_matrix<In, ExecSpace>(o.inp.data(), M, C);
  p.weight = typed_matrix<In, ExecSpace>(o.weight.data(), OC, C);
  if (!o.pre_gelu.empty()) p.pre_gelu = typed_matrix<In, ExecSpace>(o.pre_gelu.data(), M, C);
  p.M = M, p.C = C, p.OC = OC;
  p.overwrite_dinp = options.dinp_update == Update::overwrite;
  p.overwrite_dweight = options.dweight_update == Update::overwrite;
  p.overwrite_dbias = options.dbias_update == Update::overwrite;
  return p;
}

// f(problem) with the call's precision configuration.
template <class ExecSpace, class F>
void with_problem(const Operands<ExecSpace>& o, const MatmulBackwardOptions& options, F&& f) {
  check_input_types(o);
  bool matched = false;
  for_each_precision(Precisions{}, [&](auto tag) {
    using P = typename decltype(tag)::type;
    if (matched || !matches<P>(o)) return;
    matched = true;
    f(typed_problem<ExecSpace, P>(o, options));
  });
  if (!matched) {
    throw_no_precision(std::string("inputs ") + dtype_name(o.dout.dtype()) + ", dinp " +
                       dtype_name(o.dinp.dtype()) + ", dweight " + dtype_name(o.dweight.dtype()) +
                       (o.dbias.size() ? std::string(", dbias ") + dtype_name(o.dbias.dtype()) : ""));
  }
}

template <class ExecSpace>
void dispatch(Context<ExecSpace>& ctx, const Operands<ExecSpace>& o,
              const MatmulBackwardOptions& options) {
  with_problem(o, options, [&](const auto& p) {
    using P = typename std::decay_t<decltype(p)>::precision;
    with_impl<ExecSpace, P>(options.impl, options.math, p.sizes(), [&](auto tag) {
      run_impl<typename decltype(tag)::type>(ctx.state(), p, options);
    });
  });
}

// --- shapes -------------------------------------------------------------------

// A rank-2 view of the same dense array.
template <class Ref>
Ref flattened(const Ref& r, index_t rows, index_t cols) {
  if (r.empty()) return r;
  return Ref({r.data(), r.dtype()}, {rows, cols});
}

// The shape and storage checks; the activations (dout, inp, dinp, pre_gelu)
// may be rank 3 (B, T, ·) and are flattened to (B·T, ·).
template <class ExecSpace>
Operands<ExecSpace> validated(const TensorRef<ExecSpace>& dinp, const TensorRef<ExecSpace>& dweight,
                              const TensorRef<ExecSpace>& dbias,
                              const ConstTensorRef<ExecSpace>& dout,
                              const ConstTensorRef<ExecSpace>& inp,
                              const ConstTensorRef<ExecSpace>& weight,
                              const ConstTensorRef<ExecSpace>& pre_gelu) {
  using detail::arg_info;
  const auto a_dout = arg_info("dout", dout, false);
  const auto a_weight = arg_info("weight", weight, false);
  const auto a_inp = arg_info("inp", inp, false);
  const auto a_pre = arg_info("pre_gelu", pre_gelu, false);
  const auto a_dinp = arg_info("dinp", dinp, true);
  const auto a_dweight = arg_info("dweight", dweight, true);
  const auto a_dbias = arg_info("dbias", dbias, true);
  if (dout.rank() != 2 && dout.rank() != 3) {
    throw std::invalid_argument(std::string(kOpName) + ": argument 'dout' has extents " +
                                detail::extents_string(a_dout) +
                                " but rank 2 (M, OC) or rank 3 (B, T, OC) was expected");
  }
  // dout fixes the rows and OC; weight's rows must be OC and fix C.
  const bool rank3 = dout.rank() == 3;
  const index_t B = dout.extent(0), T = rank3 ? dout.extent(1) : 1;
  const index_t OC = dout.extent(dout.rank() - 1), C = weight.extent(1), M = B * T;
  detail::expect_extents(kOpName, a_weight, {OC, C}, "(OC, C) with OC from dout's last extent");
  if (rank3) {
    const char* how = "(B, T, C) with B, T from dout and C from weight's columns";
    detail::expect_extents(kOpName, a_inp, {B, T, C}, how);
    detail::expect_extents(kOpName, a_dinp, {B, T, C}, "(B, T, C), the extents of inp");
    if (!pre_gelu.empty())
      detail::expect_extents(kOpName, a_pre, {B, T, C}, "(B, T, C), the extents of inp");
  } else {
    detail::expect_extents(kOpName, a_inp, {M, C},
                           "(M, C) with M from dout's rows and C from weight's columns");
    detail::expect_extents(kOpName, a_dinp, {M, C}, "(M, C), the extents of inp");
    if (!pre_gelu.empty())
      detail::expect_extents(kOpName, a_pre, {M, C}, "(M, C), the extents of inp");
  }
  detail::expect_extents(kOpName, a_dweight, {OC, C}, "(OC, C), the extents of weight");
  if (dbias.size() != 0)
    detail::expect_extents(kOpName, a_dbias, {OC}, "(OC) from dout's columns (or an empty view)");
  const auto args = {a_dinp, a_dweight, a_dbias, a_dout, a_inp, a_weight, a_pre};
  detail::check_storage(kOpName, args);
  detail::check_memory_space<ExecSpace>(kOpName, args);
  Operands<ExecSpace> o;
  o.dinp = flattened(dinp, M, C);
  o.dweight = dweight;
  o.dbias = dbias;
  o.dout = flattened(dout, M, OC);
  o.inp = flattened(inp, M, C);
  o.weight = weight;
  o.pre_gelu = flattened(pre_gelu, M, C);
  o.M = M, o.C = C, o.OC = OC;
  return o;
}

}  // namespace

// --- what the list says -------------------------------------------------------

const std::vector<MatmulBackwardImplInfo>& matmul_backward_impls() {
  static const std::vector<MatmulBackwardImplInfo> infos = [] {
    std::vector<MatmulBackwardImplInfo> v;
    core::for_each_impl(Implementations{}, [&](auto tag) {
      using I = typename decltype(tag)::type;
      std::vector<std::string> precisions;
      for_each_precision(Precisions{}, [&](auto ptag) {
        using P = typename decltype(ptag)::type;
        if (I::template supports<P>) precisions.emplace_back(P::name);
      });
      MatmulBackwardImplInfo info;
      static_cast<ImplInfo&>(info) = {std::string(I::name), I::compiled, I::deterministic,
                                      precisions, I::tf32, I::rounds_once};
      info.dbias = std::string(bias_pass_name(I::bias));
      info.gelu = I::fused_gelu ? "fused" : "separate";
      v.push_back(info);
    });
    return v;
  }();
  return infos;
}

const std::vector<std::string>& matmul_backward_precisions() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for_each_precision(Precisions{}, [&](auto tag) { v.emplace_back(decltype(tag)::type::name); });
    return v;
  }();
  return names;
}

template <class ExecSpace>
bool matmul_backward_available(std::string_view impl) {
  if (impl == "auto") return true;  // naive runs everywhere
  bool available = false;
  const bool known = core::visit_impl(Implementations{}, impl, [&](auto tag) {
    available = available_on<typename decltype(tag)::type, ExecSpace>;
  });
  if (!known) throw_unknown(impl);
  return available;
}

namespace {
// f(PrecisionTag<P>{}) for the configuration named `precision`.
template <class F>
void with_precision_named(std::string_view precision, F&& f) {
  bool found = false;
  for_each_precision(Precisions{}, [&](auto tag) {
    if (!found && decltype(tag)::type::name == precision) {
      found = true;
      f(tag);
    }
  });
  if (!found) {
    std::string names;
    for (const auto& n : matmul_backward_precisions()) names += (names.empty() ? "" : ", ") + n;
    throw std::invalid_argument(std::string(kOpName) + ": precision '" + std::string(precision) +
                                "' is not a configuration (expected one of: " + names + ")");
  }
}
}  // namespace

template <class ExecSpace>
std::string matmul_backward_auto_impl(std::string_view precision, Math math) {
  std::string name;
  with_precision_named(precision, [&](auto tag) {
    name = auto_name<ExecSpace, typename decltype(tag)::type>(math, Sizes{});
  });
  return name;
}

template <class ExecSpace>
std::size_t matmul_backward_workspace_bytes(index_t M, index_t C, index_t OC, bool has_bias,
                                            const MatmulBackwardOptions& options,
                                            std::string_view precision, bool has_gelu) {
  std::size_t bytes = 0;
  with_precision_named(precision, [&](auto ptag) {
    using P = typename decltype(ptag)::type;
    const Sizes s{M, C, OC, has_bias, has_gelu, options.dinp_update == Update::overwrite,
                  options.dweight_update == Update::overwrite};
    with_impl<ExecSpace, P>(options.impl, options.math, s, [&](auto tag) {
      bytes = workspace_of<typename decltype(tag)::type, ExecSpace, P>(s);
    });
  });
  return bytes;
}

// --- the entry points ---------------------------------------------------------

template <class ExecSpace>
void matmul_backward(Context<ExecSpace>& ctx, const Out<ExecSpace>& dinp,
                     const Out<ExecSpace>& dweight, const Out<ExecSpace>& dbias,
                     const In<ExecSpace>& dout, const In<ExecSpace>& inp,
                     const In<ExecSpace>& weight, const In<ExecSpace>& pre_gelu,
                     const MatmulBackwardOptions& options) {
  dispatch(ctx, validated<ExecSpace>(dinp, dweight, dbias, dout, inp, weight, pre_gelu), options);
}

template <class ExecSpace>
void matmul_backward(Context<ExecSpace>& ctx, const Out<ExecSpace>& dinp,
                     const Out<ExecSpace>& dweight, const Out<ExecSpace>& dbias,
                     const In<ExecSpace>& dout, const In<ExecSpace>& inp,
                     const In<ExecSpace>& weight, const MatmulBackwardOptions& options) {
  matmul_backward(ctx, dinp, dweight, dbias, dout, inp, weight, In<ExecSpace>(), options);
}

template <class ExecSpace>
void matmul_backward(Context<ExecSpace>& ctx, BufferRef dinp, BufferRef dweight, BufferRef dbias,
                     ConstBufferRef dout, ConstBufferRef inp, ConstBufferRef weight, index_t B,
                     index_t T, index_t C, index_t OC, const MatmulBackwardOptions& options,
                     ConstBufferRef pre_gelu) {
  const std::pair<const char*, index_t> dims[] = {{"B", B}, {"T", T}, {"C", C}, {"OC", OC}};
  for (const auto& [name, value] : dims) {
    if (value < 0)
      throw std::invalid_argument(std::string(kOpName) + ": dimension " + name + " = " +
                                  std::to_string(value) + " is negative");
  }
  // Every array's element count, checked before any reference is made of it.
  const index_t M = core::checked_product(B, T, kOpName, "M = B·T");
  core::checked_product(M, C, kOpName, "the elements of inp and dinp, M·C");
  core::checked_product(M, OC, kOpName, "the elements of dout, M·OC");
  core::checked_product(OC, C, kOpName, "the elements of weight and dweight, OC·C");
  // A null dbias means "no bias gradient", a null pre_gelu "no GELU".
  matmul_backward(ctx, Out<ExecSpace>(dinp, {M, C}), Out<ExecSpace>(dweight, {OC, C}),
                  dbias.data ? Out<ExecSpace>(dbias, {OC}) : Out<ExecSpace>(),
                  In<ExecSpace>(dout, {M, OC}), In<ExecSpace>(inp, {M, C}),
                  In<ExecSpace>(weight, {OC, C}),
                  pre_gelu.data ? In<ExecSpace>(pre_gelu, {M, C}) : In<ExecSpace>(), options);
}

template <class ExecSpace>
void matmul_backward(const ExecSpace& exec, const Out<ExecSpace>& dinp,
                     const Out<ExecSpace>& dweight, const Out<ExecSpace>& dbias,
                     const In<ExecSpace>& dout, const In<ExecSpace>& inp,
                     const In<ExecSpace>& weight, const MatmulBackwardOptions& options) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  matmul_backward(ctx, dinp, dweight, dbias, dout, inp, weight, options);
}

template <class ExecSpace>
void matmul_backward(const ExecSpace& exec, const Out<ExecSpace>& dinp,
                     const Out<ExecSpace>& dweight, const Out<ExecSpace>& dbias,
                     const In<ExecSpace>& dout, const In<ExecSpace>& inp,
                     const In<ExecSpace>& weight, const In<ExecSpace>& pre_gelu,
                     const MatmulBackwardOptions& options) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  matmul_backward(ctx, dinp, dweight, dbias, dout, inp, weight, pre_gelu, options);
}

template <class ExecSpace>
void matmul_backward(const ExecSpace& exec, BufferRef dinp, BufferRef dweight, BufferRef dbias,
                     ConstBufferRef dout, ConstBufferRef inp, ConstBufferRef weight, index_t B,
                     index_t T, index_t C, index_t OC, const MatmulBackwardOptions& options,
                     ConstBufferRef pre_gelu) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  matmul_backward(ctx, dinp, dweight, dbias, dout, inp, weight, B, T, C, OC, options, pre_gelu);
}

template <class ExecSpace>
void matmul_backward_bias_pass(Context<ExecSpace>& ctx, const Out<ExecSpace>& dbias,
                               const In<ExecSpace>& dout, std::string_view impl,
                               const MatmulBackwardOptions& options) {
  if (dout.rank() != 2)
    throw std::invalid_argument(std::string(kOpName) + "_bias_pass: dout must be rank 2 (M, OC)");
  const index_t M = dout.extent(0), OC = dout.extent(1);
  detail::expect_extents(kOpName, detail::arg_info("dbias", dbias, true), {OC},
                         "(OC) from dout's columns");
  bool matched = false;
  for_each_precision(Precisions{}, [&](auto ptag) {
    using P = typename decltype(ptag)::type;
    if (matched || dout.dtype() != dtype_of<typename P::in>() || !fits<typename P::dbias>(dbias))
      return;
    matched = true;
    const auto typed_dout = typed_matrix<typename P::in, ExecSpace>(dout.data(), M, OC);
    const Vector<ExecSpace, typename P::dbias> typed_dbias = Kokkos::View<
        typename P::dbias*, Kokkos::LayoutRight, typename ExecSpace::device_type,
        Kokkos::MemoryTraits<Kokkos::Unmanaged>>(static_cast<typename P::dbias*>(dbias.data()), OC);
    with_impl<ExecSpace, P>(impl, Math::fp32, Sizes{M, 0, OC, true}, [&](auto tag) {
      using I = typename decltype(tag)::type;
      if constexpr (I::bias == BiasPass::Fused) {
        throw std::invalid_argument(std::string(kOpName) + "_bias_pass: implementation '" +
                                    std::string(I::name) + "' fuses dbias into a GEMM");
      } else {
        core::WorkspaceSize size;
        add_bias_pass_workspace<ExecSpace>(size, I::bias, M, OC);
        with_call(ctx.state(), size.bytes(), options, [&](Call<ExecSpace>& call) {
          if (M > 0 && OC > 0)
            run_bias_pass(I::bias, call, typed_dbias, typed_dout,
                          options.dbias_update == Update::overwrite);
        });
      }
    });
  });
  if (!matched)
    throw_no_precision(std::string("dout ") + dtype_name(dout.dtype()) + ", dbias " +
                       dtype_name(dbias.dtype()));
}

#define LLMK_INSTANTIATE_MATMUL_BACKWARD(Space)                                                  \
  template bool matmul_backward_available<Space>(std::string_view);                             \
  template std::string matmul_backward_auto_impl<Space>(std::string_view, Math);                 \
  template std::size_t matmul_backward_workspace_bytes<Space>(                                   \
      index_t, index_t, index_t, bool, const MatmulBackwardOptions&, std::string_view, bool);   \
  template void matmul_backward<Space>(Context<Space>&, const Out<Space>&, const Out<Space>&,    \
                                       const Out<Space>&, const In<Space>&, const In<Space>&,    \
                                       const In<Space>&, const MatmulBackwardOptions&);          \
  template void matmul_backward<Space>(Context<Space>&, const Out<Space>&, const Out<Space>&,    \
                                       const Out<Space>&, const In<Space>&, const In<Space>&,    \
                                       const In<Space>&, const In<Space>&,                       \
                                       const MatmulBackwardOptions&);                            \
  template void matmul_backward<Space>(Context<Space>&, BufferRef, BufferRef, BufferRef,         \
                                       ConstBufferRef, ConstBufferRef, ConstBufferRef, index_t,  \
                                       index_t, index_t, index_t, const MatmulBackwardOptions&,  \
                                       ConstBufferRef);                                          \
  template void matmul_backward<Space>(const Space&, const Out<Space>&, const Out<Space>&,       \
                                       const Out<Space>&, const In<Space>&, const In<Space>&,    \
                                       const In<Space>&, const MatmulBackwardOptions&);          \
  template void matmul_backward<Space>(const Space&, const Out<Space>&, const Out<Space>&,       \
                                       const Out<Space>&, const In<Space>&, const In<Space>&,    \
                                       const In<Space>&, const In<Space>&,                       \
                                       const MatmulBackwardOptions&);                            \
  template void matmul_backward<Space>(const Space&, BufferRef, BufferRef, BufferRef,            \
                                       ConstBufferRef, ConstBufferRef, ConstBufferRef, index_t,  \
                                       index_t, index_t, index_t, const MatmulBackwardOptions&,  \
                                       ConstBufferRef);                                          \
  template void matmul_backward_bias_pass<Space>(Context<Space>&, const Out<Space>&,             \
                                                 const In<Space>&, std::string_view,             \
                                                 const MatmulBackwardOptions&);
LLMK_FOR_EACH_SPACE(LLMK_INSTANTIATE_MATMUL_BACKWARD)

}  // namespace llmk
