// llmk: GPT-2's loss, the classifier's forward: softmax and cross-entropy
// fused, for each of the M = B·T positions, with logits x (a row of Vp
// columns: the vocabulary V padded to Vp, columns [V, Vp) not part of it)
// and target t:
//
//   losses = −log softmax(x[0, V))_t = log Σ_c exp(x_c − max) + max − x_t
//
// the logits untouched (an evaluation's loss, a validation batch's: what
// classifier_backward computes beside dlogits, without dlogits). Each row is
// read once (its max and sum in one online pass, classifier_backward's
// kernels), nothing but losses written; losses is always overwritten.
//
// Element types, one of these configurations: "fp32" (logits float) or
// "bf16" (logits bf16); targets int32 and losses float in both; every sum is
// float. Deterministic: every sum's order is fixed by Vp and the tuning.
//
// Targets outside [0, V) are refused before anything is written (when
// options.check_targets, the default: classifier_backward's check, a wait
// for the device). Otherwise the contract is every llmk operation's
// (llmk/matmul_backward.hpp): a call completes or throws before it touches
// any output.
#pragma once

#include <llmk/classifier_backward.hpp>  // TargetsRef
#include <llmk/context.hpp>
#include <llmk/operation.hpp>
#include <llmk/tensor_ref.hpp>
#include <llmk/types.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace llmk {

struct ClassifierForwardOptions {
  // An implementation's name (llmk::impls<llmk::ClassifierForward>()), or "auto".
  std::string impl = "auto";
  // Whether the call checks the targets first (classifier_backward's option).
  bool check_targets = true;
};

// The operation as llmk's generic queries name it: impls<ClassifierForward>(),
// available<ClassifierForward, Space>(impl), ... (llmk/operation.hpp).
struct ClassifierForward {
  using Options = ClassifierForwardOptions;
  using ImplInfo = llmk::ImplInfo;
};
extern template struct OpQueries<ClassifierForward>;  // instantiated in the library

// Bytes of workspace a call with these sizes needs (none).
template <class ExecSpace>
std::size_t classifier_forward_workspace_bytes(index_t M, index_t V, index_t Vp,
                                               const ClassifierForwardOptions& options = {},
                                               std::string_view precision = "fp32");

// Views (or TensorRefs): losses (M) or (B, T) float; logits (M, Vp) or
// (B, T, Vp); targets with losses' extents. V ≤ Vp is the vocabulary.
template <class ExecSpace>
void classifier_forward(Context<ExecSpace>& ctx, const Out<ExecSpace>& losses,
                        const In<ExecSpace>& logits, const Targets<ExecSpace>& targets, index_t V,
                        const ClassifierForwardOptions& options = {});

// Raw pointers in ExecSpace's memory, row-major as llm.c's buffers: losses
// and targets B·T, logits B·T·Vp.
template <class ExecSpace>
void classifier_forward(Context<ExecSpace>& ctx, float* losses, ConstBufferRef logits,
                        const std::int32_t* targets, index_t B, index_t T, index_t V, index_t Vp,
                        const ClassifierForwardOptions& options = {});

// The same two on an execution-space instance, with its implicit context.
template <class ExecSpace>
void classifier_forward(const ExecSpace& exec, const Out<ExecSpace>& losses,
                        const In<ExecSpace>& logits, const Targets<ExecSpace>& targets, index_t V,
                        const ClassifierForwardOptions& options = {}) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  classifier_forward(ctx, losses, logits, targets, V, options);
}
template <class ExecSpace>
void classifier_forward(const ExecSpace& exec, float* losses, ConstBufferRef logits,
                        const std::int32_t* targets, index_t B, index_t T, index_t V, index_t Vp,
                        const ClassifierForwardOptions& options = {}) {
  Context<ExecSpace> ctx = detail::implicit_context(exec);
  classifier_forward(ctx, losses, logits, targets, B, T, V, Vp, options);
}

}  // namespace llmk
