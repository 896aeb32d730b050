// llmk::layernorm_backward's bad inputs, on the default host execution space
// (argument checks run on the host before any kernel, whatever the space):
// beside the contract's (tests/contract/bad_inputs.hpp, registered by the
// generated bad_inputs_layernorm_backward.cpp with its adapter), C above an
// implementation's column limit. Each call throws std::invalid_argument
// naming the argument and leaves every array bitwise as it was.
#include "contract/bad_inputs.hpp"
#include "support/column_limits.hpp"
#include "support/layernorm_backward_adapter.hpp"
#include "support/layernorm_forward_adapter.hpp"
#include "support/sparse.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <llmk/layernorm_backward.hpp>
#include <llmk/layernorm_forward.hpp>
#include <ops/layernorm_backward/op.hpp>  // the implementations' limits (internal)

#include <limits>
#include <string>
#include <vector>

namespace {

using Host = Kokkos::DefaultHostExecutionSpace;
using ::testing::HasSubstr;

// --- C above an implementation's max_cols (layernorm's own, not the contract's) ---
// blocked indexes a row's columns in int (max_cols = 2^31 - 1): C = 2^31 is
// refused naming C, the limit and the implementation, before any write. The
// arrays have their full sizes (M = 1: 8.6 GB each), sparse mappings that
// must stay unwritten.

void check_column_limit(const llmk_test::LimitedImpl& li) {
  const std::int64_t C = li.max_cols + 1;
  const std::size_t bytes = std::size_t(C) * sizeof(float);
  llmk_test::SparseBuffer dinp(bytes), dweight(bytes), dbias(bytes), dout(bytes), inp(bytes),
      weight(bytes), mean(sizeof(float)), rstd(sizeof(float));
  for (const auto* b : {&dinp, &dweight, &dbias, &dout, &inp, &weight, &mean, &rstd})
    if (!b->ok()) GTEST_SKIP() << "cannot map " << b->bytes() << " bytes of address space";
  const llmk_test::SparseBuffer* outs[] = {&dinp, &dweight, &dbias};
  const char* names[] = {"dinp", "dweight", "dbias"};
  const float sentinel[] = {1.5f, -2.5f, 3.5f};
  std::size_t resident[3];
  for (int k = 0; k < 3; ++k) {
    outs[k]->floats()[0] = outs[k]->floats()[C - 1] = sentinel[k];
    resident[k] = outs[k]->resident_pages();
  }
  mean.floats()[0] = 0.5f;
  rstd.floats()[0] = 2.0f;
  llmk::LayernormBackwardOptions options;
  options.impl = li.name;
  options.dinp_update = options.dweight_update = options.dbias_update = llmk::Update::overwrite;
  try {
    llmk::layernorm_backward(Host(), dinp.floats(), dweight.floats(), dbias.floats(), dout.floats(),
                             inp.floats(), weight.floats(), mean.floats(), rstd.floats(), 1, 1, C,
                             options);
    Host().fence();
    ADD_FAILURE() << "no exception thrown";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("C = " + std::to_string(C)));
    EXPECT_THAT(e.what(), HasSubstr("exceeds " + std::to_string(li.max_cols)));
    EXPECT_THAT(e.what(), HasSubstr("'" + li.name + "'"));
  }
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(outs[k]->resident_pages(), resident[k]) << names[k] << ": pages were written";
    EXPECT_EQ(outs[k]->floats()[0], sentinel[k]) << names[k];
    EXPECT_EQ(outs[k]->floats()[C - 1], sentinel[k]) << names[k];
  }
}

// --- layernorm_forward's options.eps: a finite number above 0, or refused
// (naming it) before anything is written.
TEST(LayernormForwardEps, RefusedUnlessFiniteAndPositive) {
  const std::int64_t M = 2, C = 3;
  std::vector<float> out(M * C, 7.0f), mean(M, 7.0f), rstd(M, 7.0f), inp(M * C, 1.0f),
      weight(C, 1.0f);
  for (const float eps : {0.0f, -1e-5f, std::numeric_limits<float>::quiet_NaN(),
                          std::numeric_limits<float>::infinity()}) {
    llmk::LayernormForwardOptions options;
    options.eps = eps;
    try {
      llmk::layernorm_forward(Host(), out.data(), mean.data(), rstd.data(), inp.data(),
                              weight.data(), nullptr, 1, M, C, options);
      ADD_FAILURE() << "eps " << eps << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), HasSubstr("options.eps"));
    }
    for (const std::vector<float>* v : {&out, &mean, &rstd})
      for (const float x : *v) EXPECT_EQ(x, 7.0f) << "written before the refusal";
  }
}

[[maybe_unused]] const bool registered = [] {
  for (const llmk_test::LimitedImpl& li :
       llmk_test::impls_with_column_limits<llmk::op::layernorm_backward::Op::Implementations, Host>())
    llmk_test::contract::add_test("layernorm_backward", "ColumnLimits", li.name,
                                  "C = max_cols + 1 = " + std::to_string(li.max_cols + 1),
                                  [li] { check_column_limit(li); });
  return true;
}();

}  // namespace
