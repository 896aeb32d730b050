// llmk::matmul_backward's suite in the per-space binary (LLMK_TEST_SPACE):
// the contract tests every operation passes (tests/contract/), instantiated
// with its adapter (support/matmul_adapter.hpp: every precision, tf32
// included, and GELU off and on). Names: "matmul_backward/<aspect>.<case>";
// tests/README.md lists the aspects. Beside them, what the infos say that is
// matmul's own. (Bad arguments on the host: test_matmul_bad_inputs.cpp, in the
// validation binary; M ≥ 2³¹: test_matmul_huge.cpp.)
#include "contract/all.hpp"
#include "support/matmul_adapter.hpp"

#include <gtest/gtest.h>
#include <llmk/matmul_backward.hpp>

#include <set>
#include <string>
#include <vector>

#ifndef LLMK_TEST_SPACE
#error "compile with -DLLMK_TEST_SPACE=<a Kokkos execution space: Serial, OpenMP, Cuda>"
#endif

namespace {

using Space = Kokkos::LLMK_TEST_SPACE;
using llmk_test::Precision;

// matmul's own: the configurations are fp32, bf16 and bf16-fp32grad; every
// implementation runs fp32 and says how it computes dbias and GELU's
// backward; naive and the portable kernels are there on every space.
void check_matmul_infos() {
  EXPECT_EQ(llmk::matmul_backward_precisions(),
            (std::vector<std::string>{"fp32", "bf16", "bf16-fp32grad"}));
  std::set<std::string> names;
  for (const llmk::MatmulBackwardImplInfo& info : llmk::matmul_backward_impls()) {
    SCOPED_TRACE(info.name);
    names.insert(info.name);
    EXPECT_TRUE(llmk_test::declares(info, Precision::fp32));
    EXPECT_FALSE(info.dbias.empty());
    EXPECT_TRUE(info.gelu == "fused" || info.gelu == "separate") << info.gelu;
  }
  for (const char* portable : {"naive", "team", "tiled"}) {
    EXPECT_EQ(names.count(portable), 1u) << portable;
    EXPECT_TRUE(llmk::matmul_backward_available<Space>(portable)) << portable;
  }
}

[[maybe_unused]] const bool registered = [] {
  llmk_test::contract::register_space_tests<llmk_test::MatmulBackwardContract, Space>();
  llmk_test::contract::add_test("matmul_backward", "Impls", "MatmulInfos",
                                "precisions, dbias and GELU, portable kernels",
                                check_matmul_infos);
  return true;
}();

}  // namespace
