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

#include <cstring>
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

// How the interior is aligned: as Kokkos aligns an allocation (a multiple of
// 128 bytes past it), or only to a float's 4 bytes, as a slice of a larger
// buffer may be (llm.c's tensors are slices of one allocation).
enum class Alignment { Allocation, Float };

template <class Space>
class GuardedArray {
 public:
  // (Allocates: call it on the thread that initialized Kokkos.)
  GuardedArray(const std::string& label, const std::vector<float>& values, Alignment alignment)
      : guard_(alignment == Alignment::Allocation ? 64 : 61),  // floats of NaN on each side
        size_(std::int64_t(values.size())),
        storage_(label, values.size() + 2 * guard_),
        host_(Kokkos::create_mirror_view(storage_)) {
    for (std::int64_t i = 0; i < std::int64_t(host_.extent(0)); ++i) host_(i) = guard_nan();
    for (std::int64_t i = 0; i < size_; ++i) host_(guard_ + i) = values[i];
    Kokkos::deep_copy(storage_, host_);
  }

  float* data() const { return storage_.data() + guard_; }  // non-null even when empty
  std::int64_t size() const { return size_; }

  // Overwrites the interior with `values` (as many as the interior holds),
  // enqueued on `exec`. Host spaces copy with memcpy, so that any thread may
  // call it (Kokkos 3's OpenMP deep_copy launches only from one thread).
  void upload(const Space& exec, const std::vector<float>& values) const {
    if (size_ == 0) return;
    if constexpr (is_host_space<Space>) {
      (void)exec;
      std::memcpy(data(), values.data(), std::size_t(size_) * sizeof(float));
    } else {
      const Kokkos::View<const float*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>
          h(values.data(), std::size_t(size_));
      Kokkos::deep_copy(exec, Kokkos::subview(storage_, std::make_pair(guard_, guard_ + size_)), h);
    }
  }

  // Copies the interior back into `values` (after fencing `exec`); fails if a
  // guard band changed. Not to be called by two threads at once.
  ::testing::AssertionResult download(const char* what, std::vector<float>& values,
                                      const Space& exec = Space()) const {
    if constexpr (is_host_space<Space>) {
      exec.fence();
      std::memcpy(host_.data(), storage_.data(), host_.extent(0) * sizeof(float));
    } else {
      Kokkos::deep_copy(exec, host_, storage_);
      exec.fence();
    }
    values.assign(host_.data() + guard_, host_.data() + guard_ + size_);
    const std::vector<float> guard(guard_, guard_nan());
    const std::string name(what);
    auto r = bitwise_equal((name + "'s leading guard band").c_str(), host_.data(), guard.data(),
                           std::size_t(guard_));
    if (!r) return r;
    return bitwise_equal((name + "'s trailing guard band").c_str(), host_.data() + guard_ + size_,
                         guard.data(), std::size_t(guard_));
  }

 private:
  std::int64_t guard_, size_;
  Kokkos::View<float*, Kokkos::LayoutRight, typename Space::device_type> storage_;
  typename Kokkos::View<float*, Kokkos::LayoutRight, typename Space::device_type>::HostMirror host_;
};

// Alignments alternate, so that each GEMM meets both kinds among its operands.
template <class Space>
struct DeviceProblem {
  explicit DeviceProblem(const HostProblem& p)
      : shape(p.shape),
        dout("dout", p.dout, Alignment::Allocation),
        inp("inp", p.inp, Alignment::Float),
        weight("weight", p.weight, Alignment::Allocation),
        dinp("dinp", p.dinp, Alignment::Float),
        dweight("dweight", p.dweight, Alignment::Allocation),
        dbias("dbias", p.dbias, Alignment::Float) {}  // without bias: empty, between guards

  // The gradients back to p's initial values, enqueued on exec.
  void reset_gradients(const Space& exec, const HostProblem& p) const {
    dinp.upload(exec, p.dinp);
    dweight.upload(exec, p.dweight);
    dbias.upload(exec, p.dbias);
  }

  Shape shape;
  GuardedArray<Space> dout, inp, weight, dinp, dweight, dbias;
};

template <class Space, class DataType>
using UnmanagedView = Kokkos::View<DataType, Kokkos::LayoutRight, typename Space::device_type,
                                   Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// Calls llmk::matmul_backward through `entry` on `exec` with its implicit
// context, or on `ctx` when given (then `exec` must be ctx's), and fences.
// Without bias: an empty dbias view (whose data pointer lies between two
// guards, so that a write would show) or a null pointer.
// With fence = false the call is only enqueued (Cuda streams).
template <class Space>
void run_matmul_backward(const DeviceProblem<Space>& d, Entry entry, const std::string& impl,
                         llmk::Context<Space>* ctx = nullptr, const Space& exec = Space(),
                         bool fence = true) {
  llmk::MatmulBackwardOptions options;
  options.impl = impl;
  const std::int64_t B = d.shape.B, T = d.shape.T, M = d.shape.M(), C = d.shape.C,
                     OC = d.shape.OC, bias_extent = d.shape.bias ? OC : 0;
  using Float2 = UnmanagedView<Space, float**>;
  using ConstFloat2 = UnmanagedView<Space, const float**>;
  using Float3 = UnmanagedView<Space, float***>;
  using ConstFloat3 = UnmanagedView<Space, const float***>;
  const llmk::Matrix<Space> dweight(Float2(d.dweight.data(), OC, C));
  const llmk::Vector<Space> dbias(UnmanagedView<Space, float*>(d.dbias.data(), bias_extent));
  const llmk::ConstMatrix<Space> weight(ConstFloat2(d.weight.data(), OC, C));
  // The same call on the context or on the instance.
  const auto call = [&](auto&&... args) {
    if (ctx)
      llmk::matmul_backward(*ctx, args..., options);
    else
      llmk::matmul_backward(exec, args..., options);
  };
  switch (entry) {
    case Entry::Rank2Views:
      call(llmk::Matrix<Space>(Float2(d.dinp.data(), M, C)), dweight, dbias,
           llmk::ConstMatrix<Space>(ConstFloat2(d.dout.data(), M, OC)),
           llmk::ConstMatrix<Space>(ConstFloat2(d.inp.data(), M, C)), weight);
      break;
    case Entry::Rank3Views:
      call(llmk::Tensor3<Space>(Float3(d.dinp.data(), B, T, C)), dweight, dbias,
           llmk::ConstTensor3<Space>(ConstFloat3(d.dout.data(), B, T, OC)),
           llmk::ConstTensor3<Space>(ConstFloat3(d.inp.data(), B, T, C)), weight);
      break;
    case Entry::RawPointers:
      call(d.dinp.data(), d.dweight.data(), d.shape.bias ? d.dbias.data() : nullptr,
           static_cast<const float*>(d.dout.data()), static_cast<const float*>(d.inp.data()),
           static_cast<const float*>(d.weight.data()), B, T, C, OC);
      break;
  }
  if (fence) (ctx ? ctx->exec() : exec).fence();
}

struct Results {
  std::vector<float> dinp, dweight, dbias;
};

// Copies the gradients back into `r`. Fails if any guard band changed or any
// input differs (bitwise) from what was uploaded.
template <class Space>
::testing::AssertionResult download_results(const DeviceProblem<Space>& d, const HostProblem& p,
                                            Results& r, const Space& exec = Space()) {
  std::vector<float> dout, inp, weight;
  for (auto result :
       {d.dinp.download("dinp", r.dinp, exec), d.dweight.download("dweight", r.dweight, exec),
        d.dbias.download("dbias", r.dbias, exec), d.dout.download("dout", dout, exec),
        d.inp.download("inp", inp, exec), d.weight.download("weight", weight, exec),
        bitwise_equal("input dout", dout, p.dout), bitwise_equal("input inp", inp, p.inp),
        bitwise_equal("input weight", weight, p.weight)}) {
    if (!result) return result;
  }
  return ::testing::AssertionSuccess();
}

// Every gradient within kFloat32Tolerance of the float64 reference.
inline void expect_matches_reference(const Results& r, const Gradients64& ref, const Shape& s) {
  EXPECT_TRUE(matches_reference("dinp", r.dinp, ref.dinp, s.C));
  EXPECT_TRUE(matches_reference("dweight", r.dweight, ref.dweight, s.C));
  EXPECT_TRUE(matches_reference("dbias", r.dbias, ref.dbias, 0));
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
