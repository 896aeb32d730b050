// A HostProblem in an execution space's memory, each array between two guard
// bands of NaN, and the three entry points of llmk::matmul_backward called on it.
//
// The API only ever sees the arrays' interiors. An implementation that writes
// outside its outputs changes a guard (download() fails); one that reads
// outside its inputs reads NaN, which reaches its results (they must be finite).
#pragma once

#include "support/compare.hpp"
#include "support/problem.hpp"

#include <llmk/matmul_backward.hpp>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace llmk_test {

enum class Entry { Rank2Views, Rank3Views, RawPointers };

template <class Space>
constexpr bool is_host_space =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Space::memory_space>::accessible;

// "auto", then every implementation available on Space, in the library's order.
template <class Space>
std::vector<std::string> impls_under_test() {
  std::vector<std::string> impls{"auto"};
  for (const llmk::MatmulBackwardImplInfo& info : llmk::matmul_backward_impls())
    if (llmk::matmul_backward_available<Space>(info.name)) impls.push_back(info.name);
  return impls;
}

// The implementations available on Space that declare themselves deterministic.
template <class Space>
std::vector<std::string> deterministic_impls() {
  std::vector<std::string> impls;
  for (const llmk::MatmulBackwardImplInfo& info : llmk::matmul_backward_impls())
    if (info.deterministic && llmk::matmul_backward_available<Space>(info.name))
      impls.push_back(info.name);
  return impls;
}

inline const llmk::MatmulBackwardImplInfo* impl_info(const std::string& name) {
  for (const llmk::MatmulBackwardImplInfo& info : llmk::matmul_backward_impls())
    if (info.name == name) return &info;
  return nullptr;
}

// Test names of tests parameterized by an implementation's name: "naive", "team", ...
inline std::string impl_test_name(const ::testing::TestParamInfo<std::string>& info) {
  return info.param;
}

// Whether an implementation's info declares a precision configuration (tf32:
// fp32 with info.tf32).
inline bool declares(const llmk::MatmulBackwardImplInfo& info, Precision precision) {
  const std::string name =
      precision == Precision::tf32 ? std::string("fp32") : std::string(precision_name(precision));
  bool found = false;
  for (const std::string& p : info.precisions) found = found || p == name;
  return found && (precision != Precision::tf32 || info.tf32);
}

// Whether `impl` runs `precision` on Space, by the infos: an implementation
// available here that declares it; "auto" when any available one does.
template <class Space>
bool impl_runs(const std::string& impl, Precision precision) {
  for (const llmk::MatmulBackwardImplInfo& info : llmk::matmul_backward_impls()) {
    if (impl != "auto" && info.name != impl) continue;
    if (llmk::matmul_backward_available<Space>(info.name) && declares(info, precision)) return true;
  }
  return false;
}

// An implementation ("auto" included) and a precision configuration it runs.
struct ImplPrecision {
  std::string impl;
  Precision precision;
};

// Every (implementation under test, precision it runs on Space) pair, in the
// library's order; `skip_fp32` leaves plain fp32 out (the fp32 suites cover
// it), `deterministic` keeps the implementations that declare themselves so
// ("auto" is not an implementation: left out then).
template <class Space>
std::vector<ImplPrecision> impl_precisions(bool skip_fp32 = false, bool deterministic = false) {
  std::vector<ImplPrecision> v;
  for (const std::string& impl : impls_under_test<Space>()) {
    if (deterministic && (impl == "auto" || !impl_info(impl)->deterministic)) continue;
    for (Precision p : all_precisions()) {
      if (skip_fp32 && p == Precision::fp32) continue;
      if (impl_runs<Space>(impl, p)) v.push_back({impl, p});
    }
  }
  return v;
}

// A precision's name in a test name: "fp32", "tf32", "bf16", "bf16_fp32grad".
inline std::string precision_test_name(Precision precision) {
  std::string name = precision_name(precision);
  for (char& ch : name)
    if (ch == '-') ch = '_';
  return name;
}

inline std::string impl_precision_name(const ::testing::TestParamInfo<ImplPrecision>& info) {
  return info.param.impl + "_" + precision_test_name(info.param.precision);
}

// How the interior is aligned: as Kokkos aligns an allocation (a multiple of
// 128 bytes past it), or only to one element (4 bytes for float, 2 for bf16),
// as a slice of a larger buffer may be (llm.c's tensors are slices of one
// allocation).
enum class Alignment { Allocation, Element };

// The element type of a problem's array in a precision configuration.
inline llmk::DType input_dtype(Precision precision) {
  return llmk::reference::bf16_inputs(precision) ? llmk::DType::bf16 : llmk::DType::f32;
}
inline llmk::DType output_dtype(Precision precision, Output output) {
  return llmk::reference::bf16_output(precision, output) ? llmk::DType::bf16 : llmk::DType::f32;
}

// An array of float or bf16 elements between two guard bands of signaling
// NaN (guard_nan(), or its top half for bf16: 0x7fa5, also a signaling NaN).
// The host side is always float: bf16 elements are converted on upload (by
// the reference's own rounding, exact for the bf16-representable values of a
// bf16 problem) and widened on download.
template <class Space>
class GuardedArray {
 public:
  // (Allocates: call it on the thread that initialized Kokkos.)
  GuardedArray(const std::string& label, const std::vector<float>& values, Alignment alignment,
               llmk::DType dtype = llmk::DType::f32)
      : dtype_(dtype),
        elem_(dtype == llmk::DType::f32 ? 4 : 2),
        guard_(alignment == Alignment::Allocation ? 64 : 61),  // elements of NaN on each side
        size_(std::int64_t(values.size())),
        storage_(label, std::size_t(size_ + 2 * guard_) * elem_),
        host_(Kokkos::create_mirror_view(storage_)) {
    const std::vector<unsigned char> guard = guard_bytes();
    std::memcpy(host_.data(), guard.data(), guard.size());
    std::memcpy(host_.data() + (guard_ + size_) * elem_, guard.data(), guard.size());
    encode(values, host_.data() + guard_ * elem_);
    Kokkos::deep_copy(storage_, host_);
  }

  llmk::DType dtype() const { return dtype_; }
  // The interior (non-null even when empty).
  void* raw() const { return storage_.data() + guard_ * elem_; }
  float* data() const {  // a float array's
    if (dtype_ != llmk::DType::f32) throw std::logic_error("GuardedArray::data() of a bf16 array");
    return static_cast<float*>(raw());
  }
  llmk::bf16* bf16_data() const {
    if (dtype_ != llmk::DType::bf16) throw std::logic_error("bf16_data() of a float array");
    return static_cast<llmk::bf16*>(raw());
  }
  // The interior as the raw-pointer entry takes it: a float* or llmk::bf16*.
  llmk::BufferRef buffer() const {
    if (dtype_ == llmk::DType::f32) return llmk::BufferRef(data());
    return llmk::BufferRef(bf16_data());
  }
  std::int64_t size() const { return size_; }

  // Overwrites the interior with `values` (as many as the interior holds),
  // enqueued on `exec`. Host spaces copy with memcpy, so that any thread may
  // call it (Kokkos 3's OpenMP deep_copy launches only from one thread).
  void upload(const Space& exec, const std::vector<float>& values) const {
    if (size_ == 0) return;
    // float: the caller's values as they are; bf16: converted (a temporary,
    // so that a device copy is fenced before it goes away).
    std::vector<unsigned char> converted;
    const void* bytes = values.data();
    if (elem_ != 4) {
      converted.resize(std::size_t(size_) * elem_);
      encode(values, converted.data());
      bytes = converted.data();
    }
    const std::size_t n = std::size_t(size_ * elem_);
    if constexpr (is_host_space<Space>) {
      (void)exec;
      std::memcpy(raw(), bytes, n);
    } else {
      const Kokkos::View<const unsigned char*, Kokkos::HostSpace,
                         Kokkos::MemoryTraits<Kokkos::Unmanaged>>
          h(static_cast<const unsigned char*>(bytes), n);
      const std::size_t first = std::size_t(guard_ * elem_);
      Kokkos::deep_copy(exec, Kokkos::subview(storage_, std::make_pair(first, first + n)), h);
      if (!converted.empty()) exec.fence();
    }
  }

  // Copies the interior back into `values` (after fencing `exec`), widened to
  // float; fails if a guard band changed. Not to be called by two threads at once.
  ::testing::AssertionResult download(const char* what, std::vector<float>& values,
                                      const Space& exec = Space()) const {
    if constexpr (is_host_space<Space>) {
      exec.fence();
      std::memcpy(host_.data(), storage_.data(), host_.extent(0));
    } else {
      Kokkos::deep_copy(exec, host_, storage_);
      exec.fence();
    }
    values = decode(host_.data() + guard_ * elem_);
    const std::vector<unsigned char> guard = guard_bytes();
    const std::string name(what);
    for (int side = 0; side < 2; ++side) {
      const unsigned char* g = host_.data() + (side ? (guard_ + size_) * elem_ : 0);
      if (std::memcmp(g, guard.data(), guard.size()) == 0) continue;
      std::int64_t i = 0;
      while (std::memcmp(g + i * elem_, guard.data(), std::size_t(elem_)) == 0) ++i;
      return ::testing::AssertionFailure()
             << name << "'s " << (side ? "trailing" : "leading") << " guard band changed: its element "
             << i << " (of " << guard_ << ") was written";
    }
    return ::testing::AssertionSuccess();
  }

 private:
  std::vector<unsigned char> guard_bytes() const {
    std::vector<unsigned char> g(std::size_t(guard_) * elem_);
    const float f = guard_nan();
    std::uint32_t bits;
    std::memcpy(&bits, &f, 4);
    const std::uint16_t half = std::uint16_t(bits >> 16);  // 0x7fa5: a signaling bf16 NaN
    for (std::int64_t i = 0; i < guard_; ++i) {
      if (elem_ == 4)
        std::memcpy(g.data() + i * 4, &f, 4);
      else
        std::memcpy(g.data() + i * 2, &half, 2);
    }
    return g;
  }
  void encode(const std::vector<float>& values, unsigned char* out) const {
    if (elem_ == 4) {
      if (size_) std::memcpy(out, values.data(), std::size_t(size_) * 4);
      return;
    }
    for (std::int64_t i = 0; i < size_; ++i) {
      const std::uint16_t b = llmk::reference::float_to_bf16_bits(values[std::size_t(i)]);
      std::memcpy(out + 2 * i, &b, 2);
    }
  }
  std::vector<float> decode(const unsigned char* in) const {
    std::vector<float> v(static_cast<std::size_t>(size_));
    if (elem_ == 4) {
      if (size_) std::memcpy(v.data(), in, std::size_t(size_) * 4);
      return v;
    }
    for (std::int64_t i = 0; i < size_; ++i) {
      std::uint16_t b;
      std::memcpy(&b, in + 2 * i, 2);
      v[std::size_t(i)] = llmk::reference::bf16_bits_to_float(b);
    }
    return v;
  }

  llmk::DType dtype_;
  std::int64_t elem_, guard_, size_;
  Kokkos::View<unsigned char*, Kokkos::LayoutRight, typename Space::device_type> storage_;
  typename Kokkos::View<unsigned char*, Kokkos::LayoutRight, typename Space::device_type>::HostMirror
      host_;
};

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

template <class Space, class DataType>
using UnmanagedView = Kokkos::View<DataType, Kokkos::LayoutRight, typename Space::device_type,
                                   Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// An unmanaged view of the array's interior, of its element type and the
// given extents (1 to 3), as the API's TensorRef: the conversion a user's
// typed view goes through.
template <class Space, class T>
llmk::TensorRef<Space> typed_view(void* data, const std::vector<std::int64_t>& e) {
  T* p = static_cast<T*>(data);
  switch (e.size()) {
    case 1: return UnmanagedView<Space, T*>(p, e[0]);
    case 2: return UnmanagedView<Space, T**>(p, e[0], e[1]);
    default: return UnmanagedView<Space, T***>(p, e[0], e[1], e[2]);
  }
}
template <class Space>
llmk::TensorRef<Space> view_of(const GuardedArray<Space>& a, const std::vector<std::int64_t>& e) {
  return a.dtype() == llmk::DType::f32 ? typed_view<Space, float>(a.raw(), e)
                                       : typed_view<Space, llmk::bf16>(a.raw(), e);
}
// An input: through a view of const elements.
template <class Space, class T>
llmk::ConstTensorRef<Space> typed_const_view(const void* data, const std::vector<std::int64_t>& e) {
  const T* p = static_cast<const T*>(data);
  switch (e.size()) {
    case 1: return UnmanagedView<Space, const T*>(p, e[0]);
    case 2: return UnmanagedView<Space, const T**>(p, e[0], e[1]);
    default: return UnmanagedView<Space, const T***>(p, e[0], e[1], e[2]);
  }
}
template <class Space>
llmk::ConstTensorRef<Space> const_view_of(const GuardedArray<Space>& a,
                                          const std::vector<std::int64_t>& e) {
  return a.dtype() == llmk::DType::f32 ? typed_const_view<Space, float>(a.raw(), e)
                                       : typed_const_view<Space, llmk::bf16>(a.raw(), e);
}

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
