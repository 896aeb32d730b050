// Contract (c): the workspace query is exact, for every implementation
// ("auto" included) × precision, on each of Op::workspace_shapes() in each
// variant:
//   ExactBytes   a Context given exactly Op::workspace_bytes bytes of the
//                user's memory (filled with NaN bytes, between guard bytes
//                that must stay as they were) runs the call without
//                allocating, with the results of the implicit context
//                (bitwise where the info promises it); a Context that
//                allocates holds at least that many bytes after the call
//   OneByteLess  one byte less: std::invalid_argument naming the workspace
//                and both sizes, before any write (every output bitwise as it
//                was, accumulated, and poisoned and overwritten: the query
//                asked for each, as the bytes may depend on the updates); the
//                same context with the full size then works (skipped where
//                an implementation needs no workspace)
//   Misaligned   exactly Op::workspace_bytes bytes at an address one past a
//                multiple of 256 (the most the call's alignment of its
//                temporaries can take of it: 255 bytes), accumulated and
//                poisoned and overwritten: the results of the reference,
//                the guard bytes around the buffer as they were, nothing
//                allocated (skipped where an implementation needs no workspace)
#pragma once

#include "contract/device_problem.hpp"

#include <gmock/gmock.h>

#include <cstdint>
#include <cstdio>
#include <stdexcept>

namespace llmk_test::contract {

template <class Op, class Space>
void check_exact_workspace(const ImplPrecision& ip, const typename Op::Shape& shape) {
  const ImplCatalog cat = Op::template catalog<Space>();
  const typename Op::Problem p = Op::make(shape, 2024, ip.precision);
  const std::vector<ArgSpec> specs = Op::args(p.shape, p.precision);
  const Overwrites none(output_indices(specs).size(), false);
  const typename Op::Options options = Op::options(ip.impl, ip.precision, none);
  const std::size_t bytes = Op::template workspace_bytes<Space>(p.shape, options, ip.precision);
  std::printf("%s %s %s: workspace %zu bytes\n", ip.impl.c_str(),
              llmk::reference::precision_name(ip.precision), shape.name.c_str(), bytes);
  Outputs implicit, user;
  {
    const DeviceProblem<Op, Space> d(p);
    d.call(Entry::Rank2Views, options);
    ASSERT_TRUE(d.download(p, implicit));
  }
  expect_matches_reference<Op>(p, none, implicit, Op::reference(p, none),
                               promises_rounding_once(cat, ip.impl, ip.precision));
  {
    llmk::Context<Space> allocating{Space()};
    const DeviceProblem<Op, Space> d(p);
    d.call(Entry::Rank2Views, options, &allocating);
    EXPECT_GE(allocating.workspace_bytes(), bytes) << "a context holds less than the call needs";
  }
  // The user's buffer: its interior all 0xff bytes (NaN as float or double:
  // a call must not depend on what a workspace held before), between guard
  // bytes of 0xa5 that must stay as they were.
  constexpr std::size_t guard = 256;
  Kokkos::View<unsigned char*, typename Space::device_type> buffer("user workspace",
                                                                   bytes + 2 * guard);
  Kokkos::deep_copy(buffer, (unsigned char)0xa5);
  Kokkos::deep_copy(Kokkos::subview(buffer, std::make_pair(guard, guard + bytes)),
                    (unsigned char)0xff);
  {
    llmk::Context<Space> ctx{Space()};
    ctx.use_workspace(bytes ? buffer.data() + guard : nullptr, bytes);
    const DeviceProblem<Op, Space> d(p);
    d.call(Entry::Rank2Views, options, &ctx);
    ASSERT_TRUE(d.download(p, user));
    EXPECT_EQ(ctx.workspace_bytes(), bytes) << "the context allocated instead of using the buffer";
  }
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), buffer);
  for (std::size_t i = 0; i < guard; ++i) {
    ASSERT_EQ(h(i), 0xa5) << "byte " << guard - i << " before the workspace was written";
    ASSERT_EQ(h(guard + bytes + i), 0xa5) << "byte " << i << " after the workspace was written";
  }
  if (promises_bitwise_repeatable(cat, ip.impl, ip.precision))
    EXPECT_TRUE(bitwise_equal(specs, user, implicit)) << "user workspace";
  else
    expect_matches_reference<Op>(p, none, user, Op::reference(p, none),
                                 promises_rounding_once(cat, ip.impl, ip.precision));
}

// Whether one byte less was tested (false: no workspace needed).
template <class Op, class Space>
bool check_one_byte_less(const ImplPrecision& ip, const typename Op::Shape& shape) {
  const ImplCatalog cat = Op::template catalog<Space>();
  const typename Op::Problem clean = Op::make(shape, 2024, ip.precision);
  const std::vector<ArgSpec> specs = Op::args(clean.shape, clean.precision);
  const std::size_t n_out = output_indices(specs).size();
  bool tested = false;
  for (const Overwrites& o : {Overwrites(n_out, false), Overwrites(n_out, true)}) {
    SCOPED_TRACE(shape.name + ": " + describe_overwrites(specs, o));
    const typename Op::Options options = Op::options(ip.impl, ip.precision, o);
    const std::size_t bytes = Op::template workspace_bytes<Space>(clean.shape, options, ip.precision);
    if (bytes == 0) continue;
    tested = true;
    Kokkos::View<unsigned char*, typename Space::device_type> buffer("user workspace", bytes);
    const typename Op::Problem p = poisoned<Op>(clean, o);
    llmk::Context<Space> ctx{Space()};
    ctx.use_workspace(buffer.data(), bytes - 1);
    const DeviceProblem<Op, Space> d(p);
    try {
      d.call(Entry::Rank2Views, options, &ctx);
      ADD_FAILURE() << "no exception thrown";
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr("workspace"));
      EXPECT_THAT(e.what(), ::testing::HasSubstr(std::to_string(bytes - 1)));
      EXPECT_THAT(e.what(), ::testing::HasSubstr(std::to_string(bytes)));
    }
    Outputs r;
    EXPECT_TRUE(d.download(p, r));
    EXPECT_TRUE(bitwise_equal(specs, r, initial_outputs<Op>(p))) << "an output was written";
    // The same context with enough memory then works.
    ctx.use_workspace(buffer.data(), bytes);
    d.call(Entry::Rank2Views, options, &ctx);
    EXPECT_TRUE(d.download(p, r));
    expect_matches_reference<Op>(clean, o, r, Op::reference(clean, o),
                                 promises_rounding_once(cat, ip.impl, ip.precision));
  }
  return tested;
}

// `tested` set where a workspace was tested (none needed: left as it was).
template <class Op, class Space>
void check_misaligned(const ImplPrecision& ip, const typename Op::Shape& shape, bool& tested) {
  const ImplCatalog cat = Op::template catalog<Space>();
  const typename Op::Problem clean = Op::make(shape, 2024, ip.precision);
  const std::vector<ArgSpec> specs = Op::args(clean.shape, clean.precision);
  const std::size_t n_out = output_indices(specs).size();
  for (const Overwrites& o : {Overwrites(n_out, false), Overwrites(n_out, true)}) {
    SCOPED_TRACE(shape.name + ": " + describe_overwrites(specs, o));
    const typename Op::Options options = Op::options(ip.impl, ip.precision, o);
    const std::size_t bytes =
        Op::template workspace_bytes<Space>(clean.shape, options, ip.precision);
    if (bytes == 0) continue;
    tested = true;
    // Guard bytes of 0xa5 around the workspace, which starts 1 past a
    // multiple of 256 (its interior 0xff: NaN as float or double).
    constexpr std::size_t align = 256, guard = 256;
    Kokkos::View<unsigned char*, typename Space::device_type> buffer("user workspace",
                                                                     bytes + 2 * guard + align);
    const auto address = reinterpret_cast<std::uintptr_t>(buffer.data() + guard);
    const std::size_t start = guard + (align + 1 - address % align) % align;
    Kokkos::deep_copy(buffer, (unsigned char)0xa5);
    Kokkos::deep_copy(Kokkos::subview(buffer, std::make_pair(start, start + bytes)),
                      (unsigned char)0xff);
    const typename Op::Problem p = poisoned<Op>(clean, o);
    llmk::Context<Space> ctx{Space()};
    ctx.use_workspace(buffer.data() + start, bytes);
    const DeviceProblem<Op, Space> d(p);
    d.call(Entry::Rank2Views, options, &ctx);
    Outputs r;
    ASSERT_TRUE(d.download(p, r));
    EXPECT_EQ(ctx.workspace_bytes(), bytes) << "the context allocated instead of using the buffer";
    expect_matches_reference<Op>(clean, o, r, Op::reference(clean, o),
                                 promises_rounding_once(cat, ip.impl, ip.precision));
    const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), buffer);
    for (std::size_t i = 0; i < start; ++i)
      ASSERT_EQ(h(i), 0xa5) << "byte " << start - i << " before the workspace was written";
    for (std::size_t i = start + bytes; i < h.extent(0); ++i)
      ASSERT_EQ(h(i), 0xa5) << "byte " << i - start - bytes << " after the workspace was written";
  }
}

enum class WorkspaceCase { ExactBytes, OneByteLess, Misaligned };

template <class Op, class Space>
void check_workspace(const ImplPrecision& ip, WorkspaceCase c) {
  bool tested = false;
  for (const typename Op::Shape& shape : variant_shapes<Op>(Op::workspace_shapes())) {
    SCOPED_TRACE(shape.name);
    if (c == WorkspaceCase::ExactBytes)
      check_exact_workspace<Op, Space>(ip, shape);
    else if (c == WorkspaceCase::OneByteLess)
      tested = check_one_byte_less<Op, Space>(ip, shape) || tested;
    else
      check_misaligned<Op, Space>(ip, shape, tested);
  }
  if (c != WorkspaceCase::ExactBytes && !tested)
    GTEST_SKIP() << ip.impl << " needs no workspace at these shapes";
}

template <class Op, class Space>
void register_workspace_tests() {
  for (const ImplPrecision& ip : impl_precisions_of<Op, Space>()) {
    add_test(Op::name(), "Workspace", "ExactBytes_" + case_name(ip), case_description(ip),
             [=] { check_workspace<Op, Space>(ip, WorkspaceCase::ExactBytes); });
    add_test(Op::name(), "Workspace", "OneByteLess_" + case_name(ip), case_description(ip),
             [=] { check_workspace<Op, Space>(ip, WorkspaceCase::OneByteLess); });
    add_test(Op::name(), "Workspace", "Misaligned_" + case_name(ip), case_description(ip),
             [=] { check_workspace<Op, Space>(ip, WorkspaceCase::Misaligned); });
  }
}

}  // namespace llmk_test::contract
