// Context (llmk/context.hpp) and the implicit contexts of the overloads that
// take an execution-space instance.
#include <core/context_state.hpp>
#include <core/spaces.hpp>
#include <core/validate.hpp>

#include <map>
#include <mutex>

namespace llmk {

template <class ExecSpace>
Context<ExecSpace>::Context(const ExecSpace& exec)
    : state_(std::make_shared<detail::ContextState<ExecSpace>>(exec)) {}

template <class ExecSpace>
Context<ExecSpace>::Context(std::shared_ptr<detail::ContextState<ExecSpace>> state)
    : state_(std::move(state)) {}

template <class ExecSpace>
const ExecSpace& Context<ExecSpace>::exec() const {
  return state_->exec();
}

template <class ExecSpace>
void Context<ExecSpace>::use_workspace(void* data, std::size_t bytes) {
  detail::check_user_workspace<ExecSpace>(data, bytes);  // before: a refusal changes nothing
  std::lock_guard<std::mutex> lock(state_->mutex());
  state_->use_workspace(data, bytes);
}

template <class ExecSpace>
std::size_t Context<ExecSpace>::workspace_bytes() const {
  std::lock_guard<std::mutex> lock(state_->mutex());
  return state_->workspace_bytes();
}

namespace detail {

// One table per space type of the contexts made implicitly, keyed by instance.
// It is process-wide because an execution-space instance has nowhere to keep
// llmk's state; the state itself belongs to the instance. Emptied at
// Kokkos::finalize (the contexts hold device memory and library handles,
// which must go before Kokkos and the CUDA context do).
template <class ExecSpace>
struct ImplicitContexts {
  std::mutex mutex;
  std::map<const void*, std::shared_ptr<ContextState<ExecSpace>>> by_instance;
  bool hook_registered = false;

  static ImplicitContexts& get() {
    static ImplicitContexts table;
    return table;
  }
};

// Context's private constructor from a state, for the table below.
template <class ExecSpace>
struct ContextAccess {
  static Context<ExecSpace> make(std::shared_ptr<ContextState<ExecSpace>> state) {
    return Context<ExecSpace>(std::move(state));
  }
};

template <class ExecSpace>
Context<ExecSpace> implicit_context(const ExecSpace& exec) {
  auto& table = ImplicitContexts<ExecSpace>::get();
  std::lock_guard<std::mutex> lock(table.mutex);
  if (!table.hook_registered) {
    Kokkos::push_finalize_hook([] {
      auto& t = ImplicitContexts<ExecSpace>::get();
      std::lock_guard<std::mutex> l(t.mutex);
      t.by_instance.clear();
      t.hook_registered = false;  // a later Kokkos::initialize starts afresh
    });
    table.hook_registered = true;
  }
  auto& state = table.by_instance[compat::instance_key(exec)];
  if (!state) state = std::make_shared<ContextState<ExecSpace>>(exec);
  return ContextAccess<ExecSpace>::make(state);
}

}  // namespace detail

#define LLMK_INSTANTIATE_CONTEXT(Space) \
  template class Context<Space>;        \
  template Context<Space> detail::implicit_context<Space>(const Space&);
LLMK_FOR_EACH_SPACE(LLMK_INSTANTIATE_CONTEXT)

}  // namespace llmk
