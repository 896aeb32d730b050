// matmul_backward's HostProblem in an execution space's memory, each array
// between two guard bands of NaN (support/guarded_array.hpp), the three entry
// points of llmk::matmul_backward called on it, and its test parameters
// (support/impl_params.hpp, from matmul_backward_impls()).
#pragma once

#include "support/compare.hpp"
#include "support/guarded_array.hpp"
#include "support/impl_params.hpp"
#include "support/problem.hpp"

#include <llmk/matmul_backward.hpp>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace llmk_test {

// matmul_backward's implementations on Space.
template <class Space>
ImplCatalog matmul_catalog() {
  return {as_impl_infos(llmk::matmul_backward_impls()),
          [](const std::string& name) { return llmk::matmul_backward_available<Space>(name); },
          [](Precision p) {
            return llmk::matmul_backward_auto_impl<Space>(
                precision_name(p == Precision::tf32 ? Precision::fp32 : p),
                p == Precision::tf32 ? llmk::Math::tf32 : llmk::Math::fp32);
          }};
}

// "auto", then every implementation available on Space, in the library's order.
template <class Space>
std::vector<std::string> impls_under_test() {
  return impls_under_test(matmul_catalog<Space>());
}

// The implementations available on Space that declare themselves deterministic.
template <class Space>
std::vector<std::string> deterministic_impls() {
  return deterministic_impls(matmul_catalog<Space>());
}

inline const llmk::MatmulBackwardImplInfo* impl_info(const std::string& name) {
  for (const llmk::MatmulBackwardImplInfo& info : llmk::matmul_backward_impls())
    if (info.name == name) return &info;
  return nullptr;
}

// Whether `impl` runs `precision` on Space, by the infos: an implementation
// available here that declares it; "auto" when any available one does.
template <class Space>
bool impl_runs(const std::string& impl, Precision precision) {
  return impl_runs(matmul_catalog<Space>(), impl, precision);
}

// Every (implementation under test, precision it runs on Space) pair, in the
// library's order; `skip_fp32` leaves plain fp32 out (the fp32 suites cover
// it), `deterministic` keeps the implementations that declare themselves so
// ("auto" is not an implementation: left out then).
template <class Space>
std::vector<ImplPrecision> impl_precisions(bool skip_fp32 = false, bool deterministic = false) {
  return impl_precisions(matmul_catalog<Space>(), all_precisions(), skip_fp32, deterministic);
}

// A HostProblem on the device, each array of its precision's element type.
// Alignments alternate, so that each GEMM meets both kinds among its operands.
template <class Space>
struct DeviceProblem {
  explicit DeviceProblem(const HostProblem& p)
      : shape(p.shape),
        precision(p.precision),
        gelu(p.gelu),
        dout("dout", p.dout, Alignment::Allocation, input_dtype(p.precision)),
        inp("inp", p.inp, Alignment::Element, input_dtype(p.precision)),
        weight("weight", p.weight, Alignment::Allocation, input_dtype(p.precision)),
        dinp("dinp", p.dinp, Alignment::Element, output_dtype(p.precision, Output::dinp)),
        dweight("dweight", p.dweight, Alignment::Allocation,
                output_dtype(p.precision, Output::dweight)),
        // without bias: empty, between guards
        dbias("dbias", p.dbias, Alignment::Element, output_dtype(p.precision, Output::dbias)),
        pre_gelu("pre_gelu", p.pre_gelu, Alignment::Allocation, input_dtype(p.precision)) {}

  // The gradients back to p's initial values, enqueued on exec.
  void reset_gradients(const Space& exec, const HostProblem& p) const {
    dinp.upload(exec, p.dinp);
    dweight.upload(exec, p.dweight);
    dbias.upload(exec, p.dbias);
  }

  Shape shape;
  Precision precision;
  bool gelu;
  GuardedArray<Space> dout, inp, weight, dinp, dweight, dbias, pre_gelu;
};

// The options of a test call: the implementation, the math mode of its
// precision (Math::tf32 for Precision::tf32) and the updates.
inline llmk::MatmulBackwardOptions options_for(const std::string& impl, Precision precision,
                                               const Updates& updates = {}) {
  llmk::MatmulBackwardOptions options;
  options.impl = impl;
  options.math = precision == Precision::tf32 ? llmk::Math::tf32 : llmk::Math::fp32;
  const auto update = [](bool overwrite) {
    return overwrite ? llmk::Update::overwrite : llmk::Update::accumulate;
  };
  options.dinp_update = update(updates.overwrite_dinp);
  options.dweight_update = update(updates.overwrite_dweight);
  options.dbias_update = update(updates.overwrite_dbias);
  return options;
}

// Calls llmk::matmul_backward through `entry` on `exec` with its implicit
// context, or on `ctx` when given (then `exec` must be ctx's), and fences.
// Without bias: an empty dbias view (whose data pointer lies between two
// guards, so that a write would show) or a null pointer. With d.gelu, the
// overloads that take pre_gelu.
// With fence = false the call is only enqueued (Cuda streams).
template <class Space>
void run_matmul_backward(const DeviceProblem<Space>& d, Entry entry,
                         const llmk::MatmulBackwardOptions& options,
                         llmk::Context<Space>* ctx = nullptr, const Space& exec = Space(),
                         bool fence = true) {
  const std::int64_t B = d.shape.B, T = d.shape.T, M = d.shape.M(), C = d.shape.C,
                     OC = d.shape.OC, bias_extent = d.shape.bias ? OC : 0;
  const llmk::TensorRef<Space> dweight = view_of(d.dweight, {OC, C});
  const llmk::TensorRef<Space> dbias = view_of(d.dbias, {bias_extent});
  const llmk::ConstTensorRef<Space> weight = const_view_of(d.weight, {OC, C});
  // The same call on the context or on the instance, with or without pre_gelu.
  const auto call = [&](auto&&... args) {
    if (ctx)
      llmk::matmul_backward(*ctx, args..., options);
    else
      llmk::matmul_backward(exec, args..., options);
  };
  const auto call_views = [&](const std::vector<std::int64_t>& rows) {
    std::vector<std::int64_t> x = rows, o = rows;
    x.push_back(C);
    o.push_back(OC);
    if (d.gelu)
      call(view_of(d.dinp, x), dweight, dbias, const_view_of(d.dout, o), const_view_of(d.inp, x),
           weight, const_view_of(d.pre_gelu, x));
    else
      call(view_of(d.dinp, x), dweight, dbias, const_view_of(d.dout, o), const_view_of(d.inp, x),
           weight);
  };
  switch (entry) {
    case Entry::Rank2Views:
      call_views({M});
      break;
    case Entry::Rank3Views:
      call_views({B, T});
      break;
    case Entry::RawPointers: {
      const llmk::ConstBufferRef pre =
          d.gelu ? llmk::ConstBufferRef(d.pre_gelu.buffer()) : llmk::ConstBufferRef(nullptr);
      const llmk::BufferRef dbias_ptr = d.shape.bias ? d.dbias.buffer() : llmk::BufferRef(nullptr);
      if (ctx)
        llmk::matmul_backward(*ctx, d.dinp.buffer(), d.dweight.buffer(), dbias_ptr,
                              d.dout.buffer(), d.inp.buffer(), d.weight.buffer(), B, T, C, OC,
                              options, pre);
      else
        llmk::matmul_backward(exec, d.dinp.buffer(), d.dweight.buffer(), dbias_ptr,
                              d.dout.buffer(), d.inp.buffer(), d.weight.buffer(), B, T, C, OC,
                              options, pre);
      break;
    }
  }
  if (fence) (ctx ? ctx->exec() : exec).fence();
}

template <class Space>
void run_matmul_backward(const DeviceProblem<Space>& d, Entry entry, const std::string& impl,
                         llmk::Context<Space>* ctx = nullptr, const Space& exec = Space(),
                         bool fence = true) {
  run_matmul_backward(d, entry, options_for(impl, d.precision), ctx, exec, fence);
}

struct Results {
  std::vector<float> dinp, dweight, dbias;
};

// Copies the gradients back into `r` (bf16 ones widened to float). Fails if
// any guard band changed or any input differs (bitwise) from what was uploaded.
template <class Space>
::testing::AssertionResult download_results(const DeviceProblem<Space>& d, const HostProblem& p,
                                            Results& r, const Space& exec = Space()) {
  std::vector<float> dout, inp, weight, pre_gelu;
  for (auto result :
       {d.dinp.download("dinp", r.dinp, exec), d.dweight.download("dweight", r.dweight, exec),
        d.dbias.download("dbias", r.dbias, exec), d.dout.download("dout", dout, exec),
        d.inp.download("inp", inp, exec), d.weight.download("weight", weight, exec),
        d.pre_gelu.download("pre_gelu", pre_gelu, exec),
        bitwise_equal("input dout", dout, p.dout), bitwise_equal("input inp", inp, p.inp),
        bitwise_equal("input weight", weight, p.weight),
        bitwise_equal("input pre_gelu", pre_gelu, p.pre_gelu)}) {
    if (!result) return result;
  }
  return ::testing::AssertionSuccess();
}

// Whether implementation `impl` ("auto" resolved on Space) rounds every bf16
// output once from its float sum (its info's rounds_once; cuBLAS and
// cuBLASLt do not always).
template <class Space>
bool rounds_once(const std::string& impl, Precision precision) {
  if (precision != Precision::bf16 && precision != Precision::bf16_fp32grad) return true;
  const std::string name =
      impl == "auto" ? llmk::matmul_backward_auto_impl<Space>(llmk::reference::precision_name(precision))
                     : impl;
  const llmk::MatmulBackwardImplInfo* info = impl_info(name);
  return info == nullptr || info->rounds_once;
}

// Every gradient within its tolerance (llmk::reference::tolerance: per
// precision and output) of the float64 reference; bf16 ones rounded once
// where the implementation says it does (rounds_once above).
inline void expect_matches_reference(const Results& r, const Gradients64& ref, const Shape& s,
                                     Precision precision = Precision::fp32,
                                     bool check_rounding = true) {
  EXPECT_TRUE(matches_reference("dinp", r.dinp, ref.dinp, s.C, tolerance(precision, Output::dinp)));
  EXPECT_TRUE(matches_reference("dweight", r.dweight, ref.dweight, s.C,
                                tolerance(precision, Output::dweight)));
  EXPECT_TRUE(matches_reference("dbias", r.dbias, ref.dbias, 0, tolerance(precision, Output::dbias)));
  // bf16 outputs: rounded once (support/compare.hpp).
  if (!check_rounding) return;
  if (llmk::reference::bf16_output(precision, Output::dinp))
    EXPECT_TRUE(rounded_once_to_bf16("dinp", r.dinp, ref.dinp, s.C));
  if (llmk::reference::bf16_output(precision, Output::dweight))
    EXPECT_TRUE(rounded_once_to_bf16("dweight", r.dweight, ref.dweight, s.C));
  if (llmk::reference::bf16_output(precision, Output::dbias))
    EXPECT_TRUE(rounded_once_to_bf16("dbias", r.dbias, ref.dbias, 0));
}

// Bitwise the same results (a call against a solo call of the same problem).
inline ::testing::AssertionResult bitwise_equal(const Results& actual, const Results& expected) {
  for (auto r : {bitwise_equal("dinp", actual.dinp, expected.dinp),
                 bitwise_equal("dweight", actual.dweight, expected.dweight),
                 bitwise_equal("dbias", actual.dbias, expected.dbias)}) {
    if (!r) return r;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace llmk_test
