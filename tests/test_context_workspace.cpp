// llmk::Context::use_workspace's own checks (llmk/context.hpp) on
// LLMK_TEST_SPACE, named context/UseWorkspace.<case>:
//  - NullWithBytes: (nullptr, 64) refused naming 'data' and the bytes; the
//    context keeps the buffer it had; (nullptr, 0) accepted: the context
//    allocates again (a call then holds at least what it needs);
//  - CUDA builds (with a GPU: every binary of a CUDA build skips without one):
//    HostMemory (Cuda): a host pointer refused naming use_workspace, 'data',
//    host memory and the device memory expected, the context keeping its
//    buffer; DeviceMemory (a host space): a Kokkos::CudaSpace pointer refused
//    the same way; Pinned, Managed (every space): Kokkos::CudaHostPinnedSpace
//    and Kokkos::CudaUVMSpace memory accepted, every matmul_backward
//    implementation on the space run with exactly its query's bytes there
//    against the float64 reference; PinnedOperands (Cuda): every
//    matmul_backward argument in pinned memory, every implementation,
//    against the reference.
// (A workspace overlapping an argument is the contract's
// BadInputs.WorkspaceOverlap_*, one at an odd address Workspace.Misaligned_*.)
#include "contract/device_problem.hpp"
#include "support/matmul_backward_adapter.hpp"
#include "support/test_space.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <llmk/context.hpp>
#include <llmk/matmul_backward.hpp>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using Space = llmk_test::TestSpace;
using Op = llmk_test::MatmulBackwardContract;
using llmk_test::Precision;
using ::testing::HasSubstr;
namespace c = llmk_test::contract;

using Bytes = Kokkos::View<unsigned char*, typename Space::device_type>;

// ctx.use_workspace(data, bytes) throws std::invalid_argument with every
// fragment in its message, and the context still holds the `held` bytes it
// was given before.
void expect_refused(llmk::Context<Space>& ctx, void* data, std::size_t bytes,
                    const std::vector<std::string>& fragments, std::size_t held) {
  try {
    ctx.use_workspace(data, bytes);
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    for (const std::string& f : fragments) EXPECT_THAT(e.what(), HasSubstr(f));
  }
  EXPECT_EQ(ctx.workspace_bytes(), held) << "a refused workspace changed the context";
}

// A matmul_backward call on a problem of the contract's first workspace
// shape, with `ctx`; every output against the float64 reference.
void expect_right_call(llmk::Context<Space>& ctx, const std::string& impl) {
  const Op::Shape shape = Op::workspace_shapes().front();
  const Op::Problem p = Op::make(shape, 2024, Precision::fp32);
  const c::Overwrites none(3, false);
  const c::DeviceProblem<Op, Space> d(p);
  d.call(llmk_test::Entry::Rank2Views, Op::options(impl, Precision::fp32, none), &ctx);
  c::Outputs r;
  ASSERT_TRUE(d.download(p, r));
  c::expect_matches_reference<Op>(p, none, r, Op::reference(p, none), false);
}

void check_null_with_bytes() {
  Bytes buffer("workspace", 1024);
  llmk::Context<Space> ctx{Space()};
  ctx.use_workspace(buffer.data(), 1024);
  expect_refused(ctx, nullptr, 64,
                 {"llmk::Context::use_workspace", "'data'", "null pointer", "bytes = 64"}, 1024);
  ctx.use_workspace(nullptr, 0);
  EXPECT_EQ(ctx.workspace_bytes(), 0u);
  expect_right_call(ctx, "auto");
  const std::size_t needs = Op::workspace_bytes<Space>(
      Op::workspace_shapes().front(), Op::options("auto", Precision::fp32, c::Overwrites(3, false)),
      Precision::fp32);
  EXPECT_GE(ctx.workspace_bytes(), needs) << "the context did not allocate";
}

#ifdef KOKKOS_ENABLE_CUDA
void check_host_memory() {
  Bytes buffer("workspace", 1024);
  llmk::Context<Space> ctx{Space()};
  ctx.use_workspace(buffer.data(), 1024);
  std::vector<unsigned char> host(4096);
  expect_refused(ctx, host.data(), host.size(),
                 {"llmk::Context::use_workspace", "'data'", "(4096)", "is in host memory",
                  "needs device memory"},
                 1024);
}

void check_device_memory() {
  Bytes buffer("workspace", 1024);
  llmk::Context<Space> ctx{Space()};
  ctx.use_workspace(buffer.data(), 1024);
  Kokkos::View<unsigned char*, Kokkos::CudaSpace> device("device workspace", 4096);
  expect_refused(ctx, device.data(), 4096,
                 {"llmk::Context::use_workspace", "'data'", "(4096)", "is in device memory",
                  "needs host memory"},
                 1024);
}

// A workspace in MemorySpace accepted, and every implementation on Space
// right with exactly its query's bytes there.
template <class MemorySpace>
void check_workspace_in() {
  const c::Overwrites none(3, false);
  const std::vector<std::string> impls = llmk_test::impls_under_test(Op::catalog<Space>());
  std::vector<std::size_t> bytes;
  for (const std::string& impl : impls)
    bytes.push_back(Op::workspace_bytes<Space>(Op::workspace_shapes().front(),
                                               Op::options(impl, Precision::fp32, none),
                                               Precision::fp32));
  const std::size_t most = *std::max_element(bytes.begin(), bytes.end());
  ASSERT_GT(most, 0u) << "no implementation needs a workspace";
  Kokkos::View<unsigned char*, MemorySpace> buffer("workspace", most);
  for (std::size_t k = 0; k < impls.size(); ++k) {
    SCOPED_TRACE(impls[k] + ": " + std::to_string(bytes[k]) + " bytes");
    llmk::Context<Space> ctx{Space()};
    ctx.use_workspace(buffer.data(), bytes[k]);
    expect_right_call(ctx, impls[k]);
    EXPECT_EQ(ctx.workspace_bytes(), bytes[k]) << "the context allocated instead";
  }
}

// Every argument of matmul_backward in pinned host memory, through the
// raw-pointer entry: each implementation against the reference.
void check_pinned_operands() {
  using Pinned = Kokkos::View<float*, Kokkos::CudaHostPinnedSpace>;
  const Op::Shape shape = Op::nan_shape();
  const Op::Problem p = Op::make(shape, 17, Precision::fp32);
  const std::vector<c::ArgSpec> specs = Op::args(p.shape, p.precision);
  const c::Overwrites none(3, false);
  const std::vector<std::vector<double>> ref = Op::reference(p, none);
  for (const std::string& impl : llmk_test::impls_under_test(Op::catalog<Space>())) {
    SCOPED_TRACE(impl);
    std::vector<Pinned> arrays;
    std::vector<llmk::BufferRef> outs;
    std::vector<llmk::ConstBufferRef> ins;
    for (std::size_t i = 0; i < specs.size(); ++i) {
      const std::vector<float>& v = Op::values(p, i);
      arrays.emplace_back(specs[i].name, std::max<std::size_t>(v.size(), 1));
      std::copy(v.begin(), v.end(), arrays.back().data());
      float* const data = specs[i].present ? arrays.back().data() : nullptr;
      if (specs[i].output)
        outs.emplace_back(data);
      else
        ins.emplace_back(static_cast<const float*>(data));
    }
    llmk::Context<Space> ctx{Space()};
    Op::call_raw(ctx, outs, ins, c::dim_values(Op::dims(shape)),
                 Op::options(impl, Precision::fp32, none));
    ctx.exec().fence();
    c::Outputs r;
    for (std::size_t i : c::output_indices(specs))
      r.emplace_back(arrays[i].data(), arrays[i].data() + Op::values(p, i).size());
    c::expect_matches_reference<Op>(p, none, r, ref, false);
  }
}
#endif

void add(const std::string& name, const std::string& what, std::function<void()> body) {
  c::add_test("context", "UseWorkspace", name, what, std::move(body));
}

[[maybe_unused]] const bool registered = [] {
  add("NullWithBytes", "(nullptr, 64) refused, (nullptr, 0) allocates", check_null_with_bytes);
#ifdef KOKKOS_ENABLE_CUDA
  if constexpr (llmk_test::is_host_space<Space>) {
    add("DeviceMemory", "a CudaSpace pointer refused on a host space", check_device_memory);
  } else {
    add("HostMemory", "a host pointer refused on Cuda", check_host_memory);
    add("PinnedOperands", "matmul_backward's arguments in pinned memory", check_pinned_operands);
  }
  add("Pinned", "a workspace in CudaHostPinnedSpace",
      check_workspace_in<Kokkos::CudaHostPinnedSpace>);
  add("Managed", "a workspace in CudaUVMSpace", check_workspace_in<Kokkos::CudaUVMSpace>);
#endif
  return true;
}();

}  // namespace
