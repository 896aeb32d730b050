// A call's workspace: one block of device memory from the context, carved
// into the buffers the call's kernels need. Its size is computed before the
// call touches any output (WorkspaceSize), so that the context can allocate it
// (or refuse a too-small user buffer) up front.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>

namespace llmk::core {

// Every buffer starts at a multiple of this: cuBLASLt wants 256-byte aligned
// matrices and scratch, and Kokkos allocations are only 128-byte aligned. A
// user's buffer (Context::use_workspace) may start at any address: Workspace
// rounds its start up, and WorkspaceSize counts the room for that, so that a
// buffer of exactly WorkspaceSize::bytes() works wherever it lies.
inline constexpr std::size_t kWorkspaceAlign = 256;

constexpr std::size_t round_up(std::size_t bytes, std::size_t align) {
  return (bytes + align - 1) / align * align;
}

// Adds up buffers as Workspace::take will carve them.
class WorkspaceSize {
 public:
  template <class T>
  WorkspaceSize& add(std::size_t count) {
    if (count > 0) bytes_ += round_up(count * sizeof(T), kWorkspaceAlign);
    return *this;
  }
  // + room to align the block's start (at most kWorkspaceAlign − 1 bytes).
  std::size_t bytes() const { return bytes_ == 0 ? 0 : bytes_ + kWorkspaceAlign; }

 private:
  std::size_t bytes_ = 0;
};

class Workspace {
 public:
  Workspace() = default;
  Workspace(void* data, std::size_t bytes) : next_(reinterpret_cast<std::uintptr_t>(data)) {
    end_ = next_ + bytes;
    next_ = round_up(next_, kWorkspaceAlign);
  }

  // `count` elements, aligned; more than the sizes declared is a bug in llmk.
  template <class T>
  T* take(std::size_t count) {
    if (count == 0) return nullptr;
    const std::size_t bytes = round_up(count * sizeof(T), kWorkspaceAlign);
    if (next_ + bytes > end_)
      throw std::logic_error("llmk: a kernel took more workspace than its implementation declared");
    T* p = reinterpret_cast<T*>(next_);
    next_ += bytes;
    return p;
  }

 private:
  std::uintptr_t next_ = 0, end_ = 0;
};

}  // namespace llmk::core
