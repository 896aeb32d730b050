// The implementation names an operation must refuse as unknown (an adapter's
// foreign_impls()): every other operation's that it does not share, each once.
// One list of the operations here, so that a new one's names are tried on
// all the others.
#pragma once

#include "support/impl_params.hpp"

#include <llmk/attention_backward.hpp>
#include <llmk/classifier_backward.hpp>
#include <llmk/encoder_backward.hpp>
#include <llmk/gelu_backward.hpp>
#include <llmk/layernorm_backward.hpp>
#include <llmk/matmul_backward.hpp>

#include <string>
#include <vector>

namespace llmk_test {

template <class Info>
std::vector<std::string> foreign_impls_of(const std::vector<Info>& own) {
  return foreign_impl_names(as_impl_infos(own),
                            {as_impl_infos(llmk::matmul_backward_impls()),
                             as_impl_infos(llmk::layernorm_backward_impls()),
                             as_impl_infos(llmk::gelu_backward_impls()),
                             as_impl_infos(llmk::encoder_backward_impls()),
                             as_impl_infos(llmk::classifier_backward_impls()),
                             as_impl_infos(llmk::attention_backward_impls()),
                             as_impl_infos(llmk::attention_backward_recompute_impls())});
}

}  // namespace llmk_test
