// What both classifier operations (classifier_backward, classifier_forward)
// check and bind alike: the targets as an int32 operand of the declared call
// (their own reference type, TargetsRef: a view of std::int32_t or a pointer
// with extents), the vocabulary V against the rows' Vp columns, and the
// targets' values in [0, V).
#pragma once

#include <core/op/entry.hpp>
#include <llmk/classifier_backward.hpp>
#include <ops/classifier_backward/kernels.hpp>

#include <stdexcept>
#include <string>

namespace llmk::op::classifier {

template <class ExecSpace>
core::op::Operand targets_operand(const TargetsRef<ExecSpace>& t) {
  core::op::Operand o;
  o.info = {"targets",      t.data(),     std::size_t(t.size()) * sizeof(std::int32_t),
            t.rank(),       {t.extent(0), t.rank() > 1 ? t.extent(1) : 0, 0, 0},
            t.contiguous(), false};
  return o;
}

// V: 1 to Vp columns (0 only without rows).
inline void check_vocabulary(const char* op, index_t V, index_t Vp, index_t M) {
  if (V < 0 || V > Vp || (V == 0 && M > 0))
    throw std::invalid_argument(std::string(op) + ": V = " + std::to_string(V) +
                                " but the vocabulary must have 1 to Vp = " + std::to_string(Vp) +
                                " columns (logits' last extent)");
}

// std::invalid_argument naming the count and the first of the targets
// outside [0, V), when there are: a reduction on the call's queue whose
// count the host waits for (the classifier operations' check_targets).
template <class ExecSpace>
void refuse_bad_targets(const ExecSpace& exec,
                        const ConstVector<ExecSpace, std::int32_t>& targets,
                        const int V, const char* op_name) {
  const index_t bad = kernels::count_bad_targets(exec, targets, V);
  if (bad == 0) return;
  const index_t first = kernels::first_bad_target(exec, targets, V);
  Kokkos::View<std::int32_t, Kokkos::HostSpace> value("llmk::classifier_bad_target");
  Kokkos::deep_copy(exec, value, Kokkos::subview(targets, first));
  exec.fence();
  throw std::invalid_argument(std::string(op_name) + ": argument 'targets' holds " +
                              std::to_string(bad) + " value(s) outside [0, V = " +
                              std::to_string(V) + "), the first at position " +
                              std::to_string(first) + " (" + std::to_string(value()) +
                              "); nothing was written");
}

}  // namespace llmk::op::classifier
