// llmk::classifier_backward's host problems (its reference library's) in an
// execution space's memory, and calls through each entry point, for its
// tests (test_classifier_backward.cpp, test_classifier_bad_inputs.cpp).
#pragma once

#include "support/impl_params.hpp"

#include <llmk/classifier_backward.hpp>
#include <ops/classifier_backward/reference/reference.hpp>

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace llmk_test::classifier {

namespace ref = llmk::reference::classifier;
using llmk::reference::Precision;

// The entry points (support/impl_params.hpp): rank-2 views, rank-3 views,
// raw pointers.
using llmk_test::Entry;
inline const char* entry_name(Entry e) { return entry_test_name(e); }

// Raw bytes of float or bf16 in Space's memory, with host float values.
template <class Space>
struct DeviceArray {
  using Bytes = Kokkos::View<std::uint16_t*, Kokkos::LayoutRight, typename Space::memory_space>;
  Bytes bytes;  // 2-byte units (an even number of them for float)
  llmk::DType dtype = llmk::DType::f32;
  std::int64_t n = 0;

  DeviceArray() = default;
  DeviceArray(std::int64_t count, llmk::DType t)
      : bytes("classifier_array", std::size_t(count) * (t == llmk::DType::f32 ? 2 : 1)),
        dtype(t),
        n(count) {}
  void* data() const { return bytes.data(); }
  void upload(const std::vector<float>& v) const {
    auto h = Kokkos::create_mirror_view(bytes);
    for (std::int64_t i = 0; i < n; ++i) {
      if (dtype == llmk::DType::f32) {
        std::memcpy(&h(std::size_t(2 * i)), &v[std::size_t(i)], 4);
      } else {
        const llmk::bf16 b(v[std::size_t(i)]);
        std::memcpy(&h(std::size_t(i)), &b, 2);
      }
    }
    Kokkos::deep_copy(bytes, h);
  }
  std::vector<float> download() const {
    auto h = Kokkos::create_mirror_view(bytes);
    Kokkos::deep_copy(h, bytes);
    std::vector<float> v(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
      if (dtype == llmk::DType::f32) {
        std::memcpy(&v[std::size_t(i)], &h(std::size_t(2 * i)), 4);
      } else {
        llmk::bf16 b;
        std::memcpy(&b, &h(std::size_t(i)), 2);
        v[std::size_t(i)] = float(b);
      }
    }
    return v;
  }
  // Bitwise copy of the host-side bytes (for "nothing was written").
  std::vector<std::uint16_t> raw() const {
    auto h = Kokkos::create_mirror_view(bytes);
    Kokkos::deep_copy(h, bytes);
    return std::vector<std::uint16_t>(h.data(), h.data() + h.extent(0));
  }
};

template <class Space>
using TargetsView = Kokkos::View<std::int32_t*, Kokkos::LayoutRight, Space>;

// A problem on the device: logits (and a separate dlogits unless in place),
// targets, losses (poisoned with NaN) and the per-position dloss if any.
template <class Space>
struct DeviceProblem {
  ref::HostProblem host;
  bool in_place = true;
  DeviceArray<Space> logits, dlogits, losses, dloss;
  TargetsView<Space> targets;

  DeviceProblem(const ref::HostProblem& p, bool in_place_, bool with_losses = true)
      : host(p), in_place(in_place_) {
    const llmk::DType t = p.precision == Precision::bf16 ? llmk::DType::bf16 : llmk::DType::f32;
    const std::int64_t M = p.shape.M(), Vp = p.shape.Vp;
    logits = DeviceArray<Space>(M * Vp, t);
    logits.upload(p.logits);
    if (!in_place) {
      dlogits = DeviceArray<Space>(M * Vp, t);
      dlogits.upload(std::vector<float>(std::size_t(M * Vp), std::numeric_limits<float>::quiet_NaN()));
    }
    if (with_losses) {
      losses = DeviceArray<Space>(M, llmk::DType::f32);
      losses.upload(std::vector<float>(std::size_t(M), std::numeric_limits<float>::quiet_NaN()));
    }
    if (!p.dloss.empty()) {
      dloss = DeviceArray<Space>(M, llmk::DType::f32);
      dloss.upload(p.dloss);
    }
    targets = TargetsView<Space>("targets", std::size_t(M));
    set_targets(p.targets);
  }
  void set_targets(const std::vector<std::int32_t>& t) const {
    auto h = Kokkos::create_mirror_view(targets);
    for (std::size_t i = 0; i < t.size(); ++i) h(i) = t[i];
    Kokkos::deep_copy(targets, h);
  }
  const DeviceArray<Space>& out() const { return in_place ? logits : dlogits; }

  // The call through `entry` on exec's implicit context.
  void call(Entry entry, const llmk::ClassifierBackwardOptions& options,
            const Space& exec = Space()) const {
    const auto& s = host.shape;
    const std::int64_t B = s.B, T = s.T, M = s.M(), Vp = s.Vp;
    const llmk::DType t = logits.dtype;
    float* const l = losses.n ? static_cast<float*>(losses.data()) : nullptr;
    const float* const d = dloss.n ? static_cast<const float*>(dloss.data()) : nullptr;
    const llmk::DlossRef<Space> dl = d ? llmk::DlossRef<Space>(d) : llmk::DlossRef<Space>(host.dloss_value);
    if (entry == Entry::RawPointers) {
      llmk::classifier_backward(exec, llmk::BufferRef(out().data(), t), l,
                                llmk::ConstBufferRef(logits.data(), t), targets.data(), dl, B, T,
                                s.V, Vp, options);
    } else if (entry == Entry::Rank2Views) {
      llmk::classifier_backward(
          exec, llmk::TensorRef<Space>({out().data(), t}, {M, Vp}),
          l ? llmk::TensorRef<Space>({l, llmk::DType::f32}, {M}) : llmk::TensorRef<Space>(),
          llmk::ConstTensorRef<Space>({logits.data(), t}, {M, Vp}),
          llmk::TargetsRef<Space>(targets.data(), {M}),
          d ? llmk::DlossRef<Space>(llmk::ConstTensorRef<Space>({d, llmk::DType::f32}, {M})) : dl,
          s.V, options);
    } else {
      // The targets as a (B, T) view.
      Kokkos::View<const std::int32_t**, Kokkos::LayoutRight, Space,
                   Kokkos::MemoryTraits<Kokkos::Unmanaged>>
          t2(targets.data(), std::size_t(B), std::size_t(T));
      llmk::classifier_backward(
          exec, llmk::TensorRef<Space>({out().data(), t}, {B, T, Vp}),
          l ? llmk::TensorRef<Space>({l, llmk::DType::f32}, {B, T}) : llmk::TensorRef<Space>(),
          llmk::ConstTensorRef<Space>({logits.data(), t}, {B, T, Vp}), t2,
          d ? llmk::DlossRef<Space>(llmk::ConstTensorRef<Space>({d, llmk::DType::f32}, {B, T}))
            : dl,
          s.V, options);
    }
    exec.fence();
  }
};

// Each row's dloss (for the tolerances' absolute part).
inline std::vector<double> row_scales(const ref::HostProblem& p) {
  std::vector<double> v(std::size_t(p.shape.M()));
  for (std::size_t m = 0; m < v.size(); ++m) v[m] = p.dloss.empty() ? p.dloss_value : p.dloss[m];
  return v;
}

}  // namespace llmk_test::classifier
