// What a Context holds (llmk/context.hpp): the execution-space instance, a
// lock that serializes the calls made on it, the workspace, and the vendor
// resources (cuBLAS handles, ...) that backends attach to it on first use.
#pragma once

#include <llmk/compat.hpp>
#include <llmk/context.hpp>

#include <core/validate.hpp>
#include <core/workspace.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <typeindex>

namespace llmk::detail {

template <class ExecSpace>
class ContextState {
 public:
  explicit ContextState(const ExecSpace& exec) : exec_(exec) {}
  ContextState(const ContextState&) = delete;
  ContextState& operator=(const ContextState&) = delete;
  ~ContextState() {
    resources_.clear();  // handles first: they may use the stream and memory
  }

  const ExecSpace& exec() const { return exec_; }

  // Held for the whole of a call: calls on one context share its workspace
  // and resources. (On host spaces a call runs to completion inside it; on
  // Cuda the kernels of successive calls are ordered by the stream.)
  std::mutex& mutex() { return mutex_; }

  // The next four are called with mutex() held.

  // Throws std::invalid_argument if the user's workspace overlaps one of a
  // call's arguments (before the call writes anything).
  void check_workspace_apart(const char* op, const detail::Arguments& args) const {
    if (user_data_ != nullptr) detail::check_workspace_apart(op, user_data_, user_bytes_, args);
  }

  // A workspace of at least `bytes`, allocated now if the context holds less.
  // Throws before the call writes anything: std::invalid_argument if the
  // user's buffer is too small, std::runtime_error if allocation fails.
  core::Workspace workspace(std::size_t bytes) {
    if (bytes == 0) return {};
    if (user_data_ != nullptr) {
      if (user_bytes_ < bytes)
        throw std::invalid_argument(
            "llmk: the workspace given to the context (Context::use_workspace) has " +
            std::to_string(user_bytes_) + " bytes but this call needs " + std::to_string(bytes));
      return {user_data_, user_bytes_};
    }
    if (owned_.extent(0) < bytes) {
      owned_ = Buffer();  // free the old one first
      try {
        owned_ = Buffer(Kokkos::view_alloc(Kokkos::WithoutInitializing, "llmk::workspace"), bytes);
      } catch (const std::exception& e) {
        throw std::runtime_error("llmk: allocating a workspace of " + std::to_string(bytes) +
                                 " bytes failed: " + e.what());
      }
    }
    return {owned_.data(), owned_.extent(0)};
  }

  void use_workspace(void* data, std::size_t bytes) {
    owned_ = Buffer();
    user_data_ = data;
    user_bytes_ = data ? bytes : 0;
  }

  std::size_t workspace_bytes() const { return user_data_ ? user_bytes_ : owned_.extent(0); }

  // The context's instance of resource R, made as R(exec()) on first use.
  template <class R>
  R& resource() {
    std::shared_ptr<void>& slot = resources_[std::type_index(typeid(R))];
    if (!slot) slot = std::make_shared<R>(exec_);
    return *static_cast<R*>(slot.get());
  }

 private:
  using Buffer = Kokkos::View<unsigned char*, typename ExecSpace::device_type>;
  ExecSpace exec_;
  std::mutex mutex_;
  Buffer owned_;
  void* user_data_ = nullptr;
  std::size_t user_bytes_ = 0;
  std::map<std::type_index, std::shared_ptr<void>> resources_;
};

// Kokkos 3's host instances share their state (compat::instances_share_state):
// calls on them are serialized by this lock, whatever their contexts.
template <class ExecSpace>
std::mutex& shared_state_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace llmk::detail
