// Every contract test (tests/contract/operation.hpp describes the adapter).
//   register_space_tests<Op, Space>()       the per-space binary's: accuracy,
//       overwrite, NaN, large shapes, determinism, workspace, empty shapes,
//       concurrency, refusals on the space, the implementation list
//   register_bad_input_tests<Op, Host>()    the validation binary's (bad_inputs.hpp)
// Call them before RUN_ALL_TESTS (a namespace-scope initializer does).
#pragma once

#include "contract/accuracy.hpp"
#include "contract/bad_inputs.hpp"
#include "contract/concurrency.hpp"
#include "contract/determinism.hpp"
#include "contract/empty.hpp"
#include "contract/impls.hpp"
#include "contract/workspace.hpp"

namespace llmk_test::contract {

template <class Op, class Space>
void register_space_tests() {
  register_impl_tests<Op, Space>();
  register_accuracy_tests<Op, Space>();
  register_determinism_tests<Op, Space>();
  register_workspace_tests<Op, Space>();
  register_empty_tests<Op, Space>();
  register_concurrency_tests<Op, Space>();
  register_refusal_tests<Op, Space>();
}

}  // namespace llmk_test::contract
