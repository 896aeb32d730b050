// What both classifier operations (classifier_backward, classifier_forward)
// check and bind alike: the targets as an int32 operand of the declared call
// (their own reference type, TargetsRef: a view of std::int32_t or a pointer
// with extents), and the vocabulary V against the rows' Vp columns.
#pragma once

#include <core/op/entry.hpp>
#include <llmk/classifier_backward.hpp>

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

}  // namespace llmk::op::classifier
