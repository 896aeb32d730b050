// Argument checks shared by every operation's entry points (`op` is the
// operation's name in messages, e.g. "llmk::matmul_backward"). Each throws std::invalid_argument
// whose message names the argument, what it has and what was expected; they run
// before any output is touched.
#pragma once

#include <llmk/tensor_ref.hpp>
#include <llmk/types.hpp>

#include <cstddef>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

namespace llmk::detail {

// The shape and storage of one argument, independent of its View type.
struct ArgInfo {
  const char* name;
  const void* data;
  std::size_t bytes;          // span in bytes
  int rank;
  index_t extents[4];
  bool contiguous;            // dense row-major: no padding, no strides
  bool is_output;
};

template <class View>
ArgInfo arg_info(const char* name, const View& v, bool is_output) {
  ArgInfo a{name, v.data(), v.span() * sizeof(typename View::value_type), int(View::rank),
            {0, 0, 0, 0}, true, is_output};
  index_t dense_stride = 1;
  for (int r = int(View::rank) - 1; r >= 0; --r) {
    a.extents[r] = index_t(v.extent(r));
    if (v.extent(r) > 1 && index_t(v.stride(r)) != dense_stride) a.contiguous = false;
    dense_stride *= index_t(v.extent(r));
  }
  if (!v.span_is_contiguous()) a.contiguous = false;
  return a;
}

// The same of a TensorRef (an absent one has rank 0 and no bytes).
template <class ExecSpace, bool Const>
ArgInfo arg_info(const char* name, const TensorRefT<ExecSpace, Const>& t, bool is_output) {
  const std::size_t elem = t.dtype() == DType::f32 ? sizeof(float) : sizeof(bf16);
  return {name, t.data(), std::size_t(t.size()) * elem, t.rank(),
          {t.extent(0), t.extent(1), t.extent(2), t.extent(3)}, t.contiguous(), is_output};
}

// Throws unless `a` has exactly `expected` extents; `how` explains where the
// expected extents come from, e.g. "(M, C) from dout and weight".
void expect_extents(const char* op, const ArgInfo& a, std::initializer_list<index_t> expected, const char* how);

// Null data with a non-zero size, non-contiguous storage, and any output that
// overlaps an input or another output.
void check_storage(const char* op, std::initializer_list<ArgInfo> args);
void check_storage(const char* op, const std::vector<ArgInfo>& args);

// The arguments of a call as its entry point checked them, kept for the
// check that needs the context's lock: the user's workspace must overlap none
// of them (check_workspace_apart, made by core/op/call.hpp's with_call).
using Arguments = std::vector<ArgInfo>;

// Throws unless the user's workspace [data, data + bytes) (Context::
// use_workspace) overlaps none of `args`: a kernel's temporaries would
// overwrite an input, or an output would be overwritten by them. The whole
// buffer counts, whatever part of it the call takes.
void check_workspace_apart(const char* op, const void* data, std::size_t bytes,
                           const Arguments& args);

std::string extents_string(const ArgInfo& a);

// Where a pointer lives, as far as this build can tell: CUDA builds ask the
// CUDA runtime (backends/cuda/memory_kind.cpp); host-only builds know only
// host memory (src/core/memory_kind_host.cpp). Mapped: page-locked host
// memory that the device reaches at the host's address (cudaMallocHost,
// cudaHostAlloc, Kokkos::CudaHostPinnedSpace): both sides can access it, as
// both can access managed memory.
enum class MemoryKind { Host, Device, Managed, Mapped };
MemoryKind memory_kind(const void* ptr);

// Throws unless every non-empty argument lives in memory that ExecSpace can
// access: a host pointer handed to Kokkos::Cuda, or a device pointer handed to
// a host space, is named in the message instead of crashing the kernel.
template <class ExecSpace>
void check_memory_space(const char* op, const std::vector<ArgInfo>& args) {
  constexpr bool on_device =
      !Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ExecSpace::memory_space>::accessible;
  for (const ArgInfo& a : args) {
    if (a.bytes == 0) continue;
    const MemoryKind kind = memory_kind(a.data);
    const bool ok = kind == MemoryKind::Managed || kind == MemoryKind::Mapped ||
                    (kind == MemoryKind::Device) == on_device;
    if (!ok) {
      throw std::invalid_argument(std::string(op) + ": argument '" + a.name +
                                  "' with extents " + extents_string(a) + " is in " +
                                  (kind == MemoryKind::Device ? "device" : "host") +
                                  " memory, but execution space " + ExecSpace::name() +
                                  " needs " + (on_device ? "device" : "host") + " memory");
    }
  }
}

// The checks of Context::use_workspace(data, bytes), before the context takes
// the buffer: a null pointer with bytes, memory ExecSpace cannot access
// ('data' with extents (bytes) in check_memory_space's message).
template <class ExecSpace>
void check_user_workspace(const void* data, std::size_t bytes) {
  constexpr const char* op = "llmk::Context::use_workspace";
  if (data == nullptr && bytes != 0) {
    throw std::invalid_argument(std::string(op) +
                                ": argument 'data' is a null pointer but bytes = " +
                                std::to_string(bytes) +
                                "; (nullptr, 0) lets the context allocate its own workspace again");
  }
  const ArgInfo a{"data", data, bytes, 1, {index_t(bytes), 0, 0, 0}, true, false};
  check_memory_space<ExecSpace>(op, {a});
}

}  // namespace llmk::detail
