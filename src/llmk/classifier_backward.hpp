// llmk: the backward pass of GPT-2's classifier, softmax and cross-entropy
// fused (llm.c's fused_classifier). For each of the M = B·T positions, with
// logits x (a row of Vp columns: the vocabulary V padded to Vp, columns
// [V, Vp) not part of it), target t and the gradient of the loss dloss:
//
//   p        = softmax(x[0, V))                 (never stored)
//   losses   = −log p[t] = log Σ_c exp(x_c − max) + max − x_t    (optional)
//   dlogits  = (p − onehot(t)) · dloss,   columns [V, Vp) = 0
//
// dlogits may be the logits' own buffer (llm.c writes it in place: pass the
// same view or pointer as both) or a separate array of the same type; it is
// always overwritten. Each row is read once from memory by the GPU kernel
// (its max and sum in one online pass, then the second pass reads the row
// again, from the cache) and written once.
//
// Element types, one of these configurations: "fp32" (logits and dlogits
// float) or "bf16" (both bf16, llm.c's training); targets are int32, losses
// and dloss float in both; every sum is float, a bf16 dlogits rounded once.
// Deterministic: no atomics; every sum's order is fixed by Vp and the tuning.
//
// Targets outside [0, V) are refused before anything is written (when
// options.check_targets, the default): a reduction over the B·T targets on
// the call's execution space whose result the host waits for, then the
// std::invalid_argument naming the first bad position. The contract is
// otherwise matmul_backward's (llmk/matmul_backward.hpp): a call completes
// or throws before it touches any output.
#pragma once

#include <llmk/context.hpp>
#include <llmk/operation.hpp>
#include <llmk/tensor_ref.hpp>
#include <llmk/types.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace llmk {

struct ClassifierBackwardOptions {
  // An implementation's name (llmk::impls<llmk::ClassifierBackward>()), or "auto".
  std::string impl = "auto";
  // Whether the call checks the targets first. false saves a wait for the
  // device (the check's result) per call; a target outside [0, V) then
  // gives its position a NaN loss and a dlogits row without the −1.
  bool check_targets = true;
};

using ClassifierBackwardImplInfo = ImplInfo;

// The targets: int32, a dense (B, T) or (M) array in ExecSpace's memory, from
// a Kokkos::View of (const) std::int32_t or a pointer with its extents.
template <class ExecSpace>
class TargetsRef {
 public:
  TargetsRef() = default;
  TargetsRef(const std::int32_t* data, std::initializer_list<index_t> extents)
      : data_(data), rank_(int(extents.size())) {
    int r = 0;
    for (index_t e : extents) extents_[r++] = e;
  }
  template <class View, class = std::enable_if_t<Kokkos::is_view<View>::value>>
  TargetsRef(const View& v) : data_(v.data()), rank_(int(View::rank)) {
    static_assert(std::is_same_v<typename View::non_const_value_type, std::int32_t>,
                  "targets are a view of std::int32_t");
    static_assert(View::rank == 1 || View::rank == 2, "targets are (M) or (B, T)");
    static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename View::memory_space>::accessible,
                  "the view's memory must be accessible from the call's execution space");
    index_t dense_stride = 1;
    for (int r = int(View::rank) - 1; r >= 0; --r) {
      extents_[r] = index_t(v.extent(r));
      if (v.extent(r) > 1 && index_t(v.stride(r)) != dense_stride) contiguous_ = false;
      dense_stride *= index_t(v.extent(r));
    }
    if (!v.span_is_contiguous()) contiguous_ = false;
  }
  const std::int32_t* data() const { return data_; }
  int rank() const { return rank_; }
  index_t extent(int r) const { return r < rank_ ? extents_[r] : 1; }
  index_t size() const { return rank_ == 0 ? 0 : extent(0) * extent(1); }
  bool contiguous() const { return contiguous_; }

 private:
  const std::int32_t* data_ = nullptr;
  int rank_ = 0;
  index_t extents_[2] = {0, 0};
  bool contiguous_ = true;
};

// dloss: one float for every position (llm.c: 1/(B·T)), or a float per
// position ((B, T) or (M) like the targets; a pointer: B·T floats).
template <class ExecSpace>
struct DlossRef {
  float value = 1.0f;                       // when there is no array
  ConstTensorRef<ExecSpace> per_position;   // or this
  const float* pointer = nullptr;           // or this (the extents are the targets')

  DlossRef(float v) : value(v) {}
  DlossRef(const float* p) : pointer(p) {}
  DlossRef(const ConstTensorRef<ExecSpace>& a) : per_position(a) {}
  template <class View, class = std::enable_if_t<Kokkos::is_view<View>::value>>
  DlossRef(const View& v) : per_position(v) {}
  bool is_array() const { return pointer != nullptr || !per_position.empty(); }
};

template <class ExecSpace>
using Targets = TargetsRef<typename detail::NoDeduce<ExecSpace>::type>;
template <class ExecSpace>
using Dloss = DlossRef<typename detail::NoDeduce<ExecSpace>::type>;

// The operation as llmk's generic queries name it: impls<ClassifierBackward>(),
// available<ClassifierBackward, Space>(impl), ... (llmk/operation.hpp). Precisions:
// "fp32", "bf16".
struct ClassifierBackward {
  using Options = ClassifierBackwardOptions;
  using ImplInfo = ClassifierBackwardImplInfo;
};
extern template struct OpQueries<ClassifierBackward>;  // instantiated in the library

// Bytes of workspace a call with these sizes needs (none today).
template <class ExecSpace>
std::size_t classifier_backward_workspace_bytes(index_t M, index_t V, index_t Vp,
                                                const ClassifierBackwardOptions& options = {},
                                                std::string_view precision = "fp32");

// Views (or TensorRefs): logits and dlogits (M, Vp) or (B, T, Vp); losses
// (M) or (B, T) float, or empty (not computed); targets and a per-position
// dloss with losses' extents. V ≤ Vp is the vocabulary.
template <class ExecSpace>
void classifier_backward(Context<ExecSpace>& ctx, const Out<ExecSpace>& dlogits,
                         const Out<ExecSpace>& losses, const In<ExecSpace>& logits,
                         const Targets<ExecSpace>& targets, const Dloss<ExecSpace>& dloss,
                         index_t V, const ClassifierBackwardOptions& options = {});

// Raw pointers in ExecSpace's memory, row-major as llm.c's buffers: dlogits
// and logits B·T·Vp elements (the same pointer: in place), losses (nullptr:
// none) and targets B·T.
template <class ExecSpace>
void classifier_backward(Context<ExecSpace>& ctx, BufferRef dlogits, float* losses,
                         ConstBufferRef logits, const std::int32_t* targets,
                         const Dloss<ExecSpace>& dloss, index_t B, index_t T, index_t V,
                         index_t Vp, const ClassifierBackwardOptions& options = {});

// The same two on an execution-space instance, with its implicit context.
template <class ExecSpace>
void classifier_backward(const ExecSpace& exec, const Out<ExecSpace>& dlogits,
                         const Out<ExecSpace>& losses, const In<ExecSpace>& logits,
                         const Targets<ExecSpace>& targets, const Dloss<ExecSpace>& dloss,
                         index_t V, const ClassifierBackwardOptions& options = {}) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  classifier_backward(ctx, dlogits, losses, logits, targets, dloss, V, options);
}
template <class ExecSpace>
void classifier_backward(const ExecSpace& exec, BufferRef dlogits, float* losses,
                         ConstBufferRef logits, const std::int32_t* targets,
                         const Dloss<ExecSpace>& dloss, index_t B, index_t T, index_t V,
                         index_t Vp, const ClassifierBackwardOptions& options = {}) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  classifier_backward(ctx, dlogits, losses, logits, targets, dloss, B, T, V, Vp, options);
}

}  // namespace llmk
