// A HostProblem in an execution space's memory, each array between two guard
// bands of NaN, and the three entry points of llmk::matmul_backward called on it.
//
// The API only ever sees the arrays' interiors. An implementation that writes
// outside its outputs changes a guard (download() fails); one that reads
// outside its inputs reads NaN, which reaches its results (they must be finite).
#pragma once

#include "support/compare.hpp"
#include "support/problem.hpp"
#include "support/reference.hpp"

#include <llmk/matmul_backward.hpp>

#include <string>
#include <vector>

namespace llmk_test {

enum class Entry { Rank2Views, Rank3Views, RawPointers };

// Impl::Auto, then every implementation Space has.
template <class Space>
std::vector<llmk::Impl> impls_under_test() {
  std::vector<llmk::Impl> impls{llmk::Impl::Auto};
  for (llmk::Impl impl : llmk::all_impls())
    if (llmk::impl_available<Space>(impl)) impls.push_back(impl);
  return impls;
}

// Test names of tests parameterized by an Impl: "naive", "team", ...
inline std::string impl_test_name(const ::testing::TestParamInfo<llmk::Impl>& info) {
  return std::string(llmk::impl_name(info.param));
}

// How the interior is aligned: as Kokkos aligns an allocation (a multiple of
// 128 bytes past it), or only to a float's 4 bytes, as a slice of a larger
// buffer may be (llm.c's tensors are slices of one allocation).
enum class Alignment { Allocation, Float };

template <class Space>
class GuardedArray {
 public:
  GuardedArray(const std::string& label, const std::vector<float>& values, Alignment alignment)
      : guard_(alignment == Alignment::Allocation ? 64 : 61),  // floats of NaN on each side
        size_(std::int64_t(values.size())),
        storage_(label, values.size() + 2 * guard_) {
    auto h = Kokkos::create_mirror_view(storage_);
    for (std::int64_t i = 0; i < std::int64_t(h.extent(0)); ++i) h(i) = guard_nan();
    for (std::int64_t i = 0; i < size_; ++i) h(guard_ + i) = values[i];
    Kokkos::deep_copy(storage_, h);
  }

  float* data() const { return storage_.data() + guard_; }  // non-null even when empty

  // Copies the interior back into `values`; fails if a guard band changed.
  ::testing::AssertionResult download(const char* what, std::vector<float>& values) const {
    auto h = Kokkos::create_mirror_view(storage_);
    Kokkos::deep_copy(h, storage_);
    values.assign(h.data() + guard_, h.data() + guard_ + size_);
    const std::vector<float> guard(guard_, guard_nan());
    const std::vector<float> before(h.data(), h.data() + guard_);
    const std::vector<float> after(h.data() + guard_ + size_, h.data() + 2 * guard_ + size_);
    const std::string name(what);
    auto r = bitwise_equal((name + "'s leading guard band").c_str(), before, guard);
    if (!r) return r;
    return bitwise_equal((name + "'s trailing guard band").c_str(), after, guard);
  }

 private:
  std::int64_t guard_, size_;
  Kokkos::View<float*, Kokkos::LayoutRight, typename Space::device_type> storage_;
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

  Shape shape;
  GuardedArray<Space> dout, inp, weight, dinp, dweight, dbias;
};

template <class Space, class DataType>
using UnmanagedView = Kokkos::View<DataType, Kokkos::LayoutRight, typename Space::device_type,
                                   Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// Calls llmk::matmul_backward through `entry` on Space's default instance and
// fences it. Without bias: an empty dbias view (whose data pointer lies between
// two guards, so that a write would show) or a null pointer.
template <class Space>
void run_matmul_backward(const DeviceProblem<Space>& d, Entry entry, llmk::Impl impl) {
  const Space exec;
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
  switch (entry) {
    case Entry::Rank2Views:
      llmk::matmul_backward(exec, llmk::Matrix<Space>(Float2(d.dinp.data(), M, C)), dweight,
                            dbias, llmk::ConstMatrix<Space>(ConstFloat2(d.dout.data(), M, OC)),
                            llmk::ConstMatrix<Space>(ConstFloat2(d.inp.data(), M, C)), weight,
                            options);
      break;
    case Entry::Rank3Views:
      llmk::matmul_backward(exec, llmk::Tensor3<Space>(Float3(d.dinp.data(), B, T, C)), dweight,
                            dbias, llmk::ConstTensor3<Space>(ConstFloat3(d.dout.data(), B, T, OC)),
                            llmk::ConstTensor3<Space>(ConstFloat3(d.inp.data(), B, T, C)), weight,
                            options);
      break;
    case Entry::RawPointers:
      llmk::matmul_backward(exec, d.dinp.data(), d.dweight.data(),
                            d.shape.bias ? d.dbias.data() : nullptr, d.dout.data(), d.inp.data(),
                            d.weight.data(), B, T, C, OC, options);
      break;
  }
  exec.fence();
}

struct Results {
  std::vector<float> dinp, dweight, dbias;
};

// Copies the gradients back into `r`. Fails if any guard band changed or any
// input differs (bitwise) from what was uploaded.
template <class Space>
::testing::AssertionResult download_results(const DeviceProblem<Space>& d, const HostProblem& p,
                                            Results& r) {
  std::vector<float> dout, inp, weight;
  for (auto result : {d.dinp.download("dinp", r.dinp), d.dweight.download("dweight", r.dweight),
                      d.dbias.download("dbias", r.dbias), d.dout.download("dout", dout),
                      d.inp.download("inp", inp), d.weight.download("weight", weight),
                      bitwise_equal("input dout", dout, p.dout),
                      bitwise_equal("input inp", inp, p.inp),
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

}  // namespace llmk_test
