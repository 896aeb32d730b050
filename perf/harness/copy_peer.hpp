// peer:copy, the bandwidth ceiling of a memory-bound operation: a copy on the
// backend's instance that moves as many bytes as one call of the operation
// must (e.g. layernorm backward's Shape::bytes: its inputs read, its outputs
// written, the accumulated ones read too).
//
// How the bytes are split: a copy reads each byte it writes, so a copy of
// bytes/2 from one buffer into another reads bytes/2 and writes bytes/2,
// `bytes` in all (the operation itself reads more than it writes: layernorm
// backward reads 2 or 3 arrays of M×C for the one it writes). Its GB/s is
// bytes / time, counted as the operation's rows are, so a row's "% copy" is
// the copy's time over the row's: how close the row comes to moving its bytes
// as fast as the memory system copies them.
//
// The copy is Kokkos::deep_copy on the instance: on Cuda a cudaMemcpyAsync
// device to device on the instance's stream (what Kokkos' DeepCopy between
// CudaSpace views is), on host spaces Kokkos' host copy (threads of the
// default host space, memcpy-like). Its buffers are the Row's: made here,
// freed with it (with its precision's group of rows).
#pragma once

#include "suite.hpp"

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

namespace llmk::perf {

// A row "peer:copy" for a call of `bytes` on `units` units (its probes copy
// the same fraction of the buffers as the operation's probes do of its rows).
template <class ExecSpace>
Row copy_row(const ExecSpace& exec, double bytes, std::int64_t units,
             const std::string& precision) {
  using Buffer = Kokkos::View<unsigned char*, Kokkos::LayoutRight, typename ExecSpace::device_type>;
  const std::int64_t half = std::int64_t(std::llround(bytes / 2));
  // Zero-filled by Kokkos: every page is touched before the first timed copy.
  const Buffer src("llmk-perf::copy_src", std::size_t(half)),
      dst("llmk-perf::copy_dst", std::size_t(half));
  Row row;
  row.name = "peer:copy";
  row.kind = "peer";
  row.precision = precision;
  row.bytes = 2.0 * double(half);
  row.computes = false;
  row.run = [exec, src, dst] { Kokkos::deep_copy(exec, dst, src); };
  row.run_part = [exec, src, dst, half, units](std::int64_t n) {
    const std::int64_t len = units > 0 ? std::int64_t(double(half) * double(n) / double(units)) : 0;
    const std::pair<std::int64_t, std::int64_t> part(0, len);
    Kokkos::deep_copy(exec, Kokkos::subview(dst, part), Kokkos::subview(src, part));
  };
  row.note = "a copy of half the bytes a call moves from one buffer into another, on the "
             "backend (reads + writes = the call's bytes; Kokkos::deep_copy on the instance, "
             "cudaMemcpyAsync on Cuda): the bandwidth ceiling that % copy compares with";
  return row;
}

}  // namespace llmk::perf
