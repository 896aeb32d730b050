// llmk::Context: what one execution-space instance (a CUDA stream, a host
// space instance) needs across calls: the workspace memory of the kernels'
// temporaries and the vendor library handles (cuBLAS, cuBLASLt). Resources
// belong to an instance, never to a type, so calls on distinct instances never
// share them.
//
//   Kokkos::Cuda stream_exec(stream);
//   llmk::Context<Kokkos::Cuda> ctx(stream_exec);   // once per stream
//   llmk::matmul_backward(ctx, dinp, dweight, dbias, dout, inp, weight);
//
// The overloads taking an execution-space instance instead use an implicit
// context of that instance (one per CUDA stream; on host spaces one per
// instance with Kokkos 4, one per space with Kokkos 3, whose host instances
// share their state), created on first use and released at Kokkos::finalize.
//
// Thread safety: a context may be used from several host threads; calls on
// one context are serialized (they share its workspace), calls on distinct
// contexts run concurrently. Copies of a Context share one state.
// Lifetime: like a Kokkos::View, a Context must be destroyed before
// Kokkos::finalize (it holds device memory and, on Cuda, library handles).
#pragma once

#include <llmk/types.hpp>

#include <cstddef>
#include <memory>

namespace llmk {

namespace detail {
template <class ExecSpace>
class ContextState;
template <class ExecSpace>
struct ContextAccess;
}

template <class ExecSpace>
class Context {
 public:
  explicit Context(const ExecSpace& exec = ExecSpace());

  const ExecSpace& exec() const;

  // Hand the context memory it uses for temporaries instead of allocating:
  // `bytes` bytes in ExecSpace's memory space, which must stay valid while
  // the context is used. A call that needs more than that (see
  // matmul_backward_workspace_bytes) throws std::invalid_argument before it
  // touches any output. Without it, the context allocates on the first call
  // that needs more than it holds and keeps the memory for later calls.
  void use_workspace(void* data, std::size_t bytes);
  // Bytes of workspace the context holds now (allocated or given).
  std::size_t workspace_bytes() const;

  detail::ContextState<ExecSpace>& state() const { return *state_; }

 private:
  friend struct detail::ContextAccess<ExecSpace>;
  explicit Context(std::shared_ptr<detail::ContextState<ExecSpace>> state);
  std::shared_ptr<detail::ContextState<ExecSpace>> state_;
};

}  // namespace llmk
